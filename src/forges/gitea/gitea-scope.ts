import type { EntityKind } from "../../db/directory/schema";

/**
 * Where runners live on a Gitea instance: a repository, an organization, or the whole instance
 * (an entity of kind `enterprise` on a Gitea endpoint; its API is the admin one and its token
 * needs write:admin).
 */
export type GiteaScope = { kind: "repository"; owner: string; repo: string } | { kind: "organization"; org: string } | { kind: "instance" };

export function giteaScopeOf(entity: { kind: EntityKind; owner: string; name: string }): GiteaScope {
  switch (entity.kind) {
    case "repository":
      return { kind: "repository", owner: entity.owner, repo: entity.name };
    case "organization":
      return { kind: "organization", org: entity.owner };
    case "enterprise":
      return { kind: "instance" };
  }
}

const seg = encodeURIComponent;

/** The REST path prefix of the scope's runners and hooks: `/repos/o/r`, `/orgs/o` or `/admin`. */
export function giteaScopePath(scope: GiteaScope): string {
  switch (scope.kind) {
    case "repository":
      return `/repos/${seg(scope.owner)}/${seg(scope.repo)}`;
    case "organization":
      return `/orgs/${seg(scope.org)}`;
    case "instance":
      return "/admin";
  }
}
