import type { EntityKind } from "../db/directory/schema";

/** Where runners live on GitHub: a repository, an organization or an enterprise. */
export type GithubScope =
  | { kind: "repository"; owner: string; repo: string }
  | { kind: "organization"; org: string }
  | { kind: "enterprise"; enterprise: string };

export function scopeOf(entity: { kind: EntityKind; owner: string; name: string }): GithubScope {
  switch (entity.kind) {
    case "repository":
      return { kind: "repository", owner: entity.owner, repo: entity.name };
    case "organization":
      return { kind: "organization", org: entity.owner };
    case "enterprise":
      return { kind: "enterprise", enterprise: entity.owner };
  }
}

const seg = encodeURIComponent;

/** The REST path prefix of the scope: `/repos/o/r`, `/orgs/o` or `/enterprises/e`. */
export function scopePath(scope: GithubScope): string {
  switch (scope.kind) {
    case "repository":
      return `/repos/${seg(scope.owner)}/${seg(scope.repo)}`;
    case "organization":
      return `/orgs/${seg(scope.org)}`;
    case "enterprise":
      return `/enterprises/${seg(scope.enterprise)}`;
  }
}

/** A stable, case-insensitive cache key for the scope (GitHub names are case-insensitive). */
export const scopeKey = (scope: GithubScope) => scopePath(scope).toLowerCase();
