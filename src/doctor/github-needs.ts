import type { EntityKind } from "../db/directory/schema";

/**
 * What Edgerunner needs from GitHub credentials for each kind of entity (docs/github.md,
 * "Credentials"), as GitHub names it: a GitHub App's permissions (the keys of an installation's
 * `permissions`), and a classic PAT's OAuth scopes (its X-OAuth-Scopes header).
 */

export type Severity = "fail" | "warn";

export interface PermissionNeed {
  /** The key in an installation's `permissions`. */
  permission: string;
  level: "read" | "write";
  /** Where it is in the App's settings. */
  label: string;
  why: string;
  severity: Severity;
}

export interface ScopeNeed {
  /** Any one of these scopes will do (a broader scope includes the narrower one). */
  anyOf: string[];
  why: string;
  severity: Severity;
}

const LEVEL_RANK: Record<string, number> = { read: 1, write: 2, admin: 3 };

/** Whether a granted level (read, write, admin) covers a needed one. */
export const covers = (granted: string | undefined, needed: "read" | "write") => (LEVEL_RANK[granted ?? ""] ?? 0) >= LEVEL_RANK[needed]!;

const ACTIONS_READ = (appWebhook: boolean): PermissionNeed => ({
  permission: "actions",
  level: "read",
  label: "Repository permissions → Actions",
  why: appWebhook
    ? "the App's webhook can subscribe to workflow_job events only with it"
    : "old queued jobs are re-checked at GitHub with it",
  severity: appWebhook ? "fail" : "warn",
});

/**
 * An App's needs for one entity; null for an enterprise, whose runners no App can manage.
 * `appWebhook`: the App's own webhook feeds the entity its jobs.
 */
export function appNeeds(kind: EntityKind, opts: { appWebhook: boolean }): PermissionNeed[] | null {
  switch (kind) {
    case "repository":
      return [
        {
          permission: "administration",
          level: "write",
          label: "Repository permissions → Administration",
          why: "its runners are registered and removed with it",
          severity: "fail",
        },
        ACTIONS_READ(opts.appWebhook),
      ];
    case "organization":
      return [
        {
          permission: "organization_self_hosted_runners",
          level: "write",
          label: "Organization permissions → Self-hosted runners",
          why: "its runners are registered and removed with it",
          severity: "fail",
        },
        ACTIONS_READ(opts.appWebhook),
      ];
    case "enterprise":
      return null;
  }
}

export function missingPermissions(granted: Record<string, string>, needs: PermissionNeed[]): PermissionNeed[] {
  return needs.filter((n) => !covers(granted[n.permission], n.level));
}

/** A classic PAT's needs for one entity. */
export function scopeNeeds(kind: EntityKind): ScopeNeed[] {
  switch (kind) {
    case "repository":
      return [{ anyOf: ["repo"], why: "its runners are registered and removed, and its jobs read, with it", severity: "fail" }];
    case "organization":
      return [
        { anyOf: ["admin:org", "manage_runners:org"], why: "its runners are registered and removed with it", severity: "fail" },
        { anyOf: ["repo"], why: "the status of jobs in private repositories is re-checked with it", severity: "warn" },
      ];
    case "enterprise":
      return [
        {
          anyOf: ["manage_runners:enterprise", "admin:enterprise"],
          why: "its runners are registered and removed with it",
          severity: "fail",
        },
      ];
  }
}

/** X-OAuth-Scopes as a list (`"repo, admin:org"`); null when the header is absent. */
export function parseScopes(header: string | null): string[] | null {
  if (header === null) return null;
  return header
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
}

export function missingScopes(scopes: string[], needs: ScopeNeed[]): ScopeNeed[] {
  return needs.filter((n) => !n.anyOf.some((s) => scopes.includes(s)));
}

/** What a fine-grained PAT needs for one entity, in the words of GitHub's token settings. */
export function fineGrainedNeed(kind: EntityKind): string {
  switch (kind) {
    case "repository":
      return "Repository permissions → Administration: Read and write (and Actions: Read), with the repository selected";
    case "organization":
      return "Organization permissions → Self-hosted runners: Read and write, with the organization as resource owner";
    case "enterprise":
      return "a classic PAT with manage_runners:enterprise (fine-grained tokens cannot manage enterprise runners)";
  }
}

/** What reading an entity's hooks takes, for the webhook check's advice. */
export function hookAccessNeed(kind: EntityKind): string {
  return kind === "repository"
    ? "App: Repository permissions → Webhooks: Read and write; classic PAT: repo or admin:repo_hook; fine-grained PAT: Webhooks: Read and write"
    : "App: Organization permissions → Webhooks: Read and write; classic PAT: admin:org_hook; fine-grained PAT: Organization Webhooks: Read and write";
}
