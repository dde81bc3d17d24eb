/**
 * GitHub App permissions and the webhook events they open, as the manifest flow checks them.
 *
 * The permission names and access levels are GitHub's `app-permissions` schema (api.github.com
 * OpenAPI description; test/contract compares this table with it). Events: the fake knows the
 * ones listed here, each with the repository permission GitHub's webhook reference names
 * ("To subscribe to this event, a GitHub App must have at least read-level access for the …
 * permission"); `installation` and `installation_repositories` go to every App unasked and
 * cannot be subscribed, as on GitHub.
 */

const RW = ["read", "write"];
const RWA = ["read", "write", "admin"];

export const APP_PERMISSIONS: Record<string, string[]> = {
  actions: RW,
  administration: RW,
  artifact_metadata: RW,
  attestations: RW,
  checks: RW,
  code_quality: RW,
  codespaces: RW,
  contents: RW,
  dependabot_secrets: RW,
  deployments: RW,
  discussions: RW,
  environments: RW,
  issues: RW,
  merge_queues: RW,
  metadata: RW,
  packages: RW,
  pages: RW,
  pull_requests: RW,
  repository_custom_properties: RW,
  repository_hooks: RW,
  repository_projects: RWA,
  secret_scanning_alerts: RW,
  secrets: RW,
  security_events: RW,
  single_file: RW,
  statuses: RW,
  vulnerability_alerts: RW,
  workflows: ["write"],
  custom_properties_for_organizations: RW,
  members: RW,
  organization_administration: RW,
  organization_custom_roles: RW,
  organization_custom_org_roles: RW,
  organization_custom_properties: RWA,
  organization_copilot_seat_management: RW,
  organization_copilot_agent_settings: RW,
  organization_announcement_banners: RW,
  organization_events: ["read"],
  organization_hooks: RW,
  organization_personal_access_tokens: RW,
  organization_personal_access_token_requests: RW,
  organization_plan: ["read"],
  organization_projects: RWA,
  organization_packages: RW,
  organization_secrets: RW,
  organization_self_hosted_runners: RW,
  organization_user_blocking: RW,
  email_addresses: RW,
  followers: RW,
  git_ssh_keys: RW,
  gpg_keys: RW,
  interaction_limits: RW,
  profile: ["write"],
  starring: RW,
  enterprise_custom_properties_for_organizations: RWA,
};

/** The events the fake can deliver or check, with the permission (read at least) each needs. */
export const EVENT_PERMISSIONS: Record<string, string> = {
  workflow_job: "actions",
  workflow_run: "actions",
  push: "contents",
  pull_request: "pull_requests",
  issues: "issues",
  issue_comment: "issues",
  check_run: "checks",
  check_suite: "checks",
};

const LEVELS = ["read", "write", "admin"];

/** Whether `permissions` give at least `level` of `permission` (write includes read, admin both). */
export function grants(permissions: Record<string, string>, permission: string, level = "read"): boolean {
  const has = permissions[permission];
  return has !== undefined && LEVELS.indexOf(has) >= LEVELS.indexOf(level);
}

/** English list as GitHub writes it in messages: "a", "a and b", "a, b, and c" (with `or`: "a or b"). */
export const listed = (items: string[], type: "conjunction" | "disjunction" = "conjunction") =>
  new Intl.ListFormat("en", { type }).format(items);
