import { webhookUrlFor } from "../lib/webhook-url";

/**
 * The GitHub App manifest the first-run page posts to GitHub: exactly the permissions Edgerunner
 * uses for the runners the user chose, the `workflow_job` event, and our own URLs for the
 * webhook, the redirect back with the code and the page after installation. GitHub generates
 * the webhook secret, the private key and the client secret when it registers the App
 * (docs.github.com "Registering a GitHub App from a manifest"); the manifest has no field for
 * a secret of ours.
 */

/** Which runners the App is for: repository runners, organization runners, or both. */
export interface AppFeatures {
  repositoryRunners: boolean;
  organizationRunners: boolean;
}

export type PermissionLevel = "read" | "write";

/** A permission the App asks for, and why Edgerunner needs it (shown on the page). */
export interface PermissionNeed {
  permission: string;
  level: PermissionLevel;
  why: string;
}

/** What Edgerunner needs whatever runners it manages. */
const ALWAYS: PermissionNeed[] = [
  {
    permission: "actions",
    level: "read",
    why: "subscribe to workflow_job events, and look up a job GitHub stopped telling us about (the stale-job re-check)",
  },
  { permission: "metadata", level: "read", why: "GitHub grants it to every App with repository permissions; read repository names" },
];

const REPOSITORY_RUNNERS: PermissionNeed = {
  permission: "administration",
  level: "write",
  why: "repository runners: JIT configurations, registration tokens, listing and deleting the repository's self-hosted runners",
};

const ORGANIZATION_RUNNERS: PermissionNeed = {
  permission: "organization_self_hosted_runners",
  level: "write",
  why: "organization runners: JIT configurations, runner groups, listing and deleting the organization's self-hosted runners",
};

/** The permissions for `features`, each with its reason; none for hooks, since the App's own webhook is used. */
export function permissionsNeeded(features: AppFeatures): PermissionNeed[] {
  return [
    ...ALWAYS,
    ...(features.repositoryRunners ? [REPOSITORY_RUNNERS] : []),
    ...(features.organizationRunners ? [ORGANIZATION_RUNNERS] : []),
  ];
}

/** The App's webhook events: only the one Edgerunner acts on. Installation events come to every App unasked. */
export const APP_EVENTS = ["workflow_job"] as const;

export interface AppManifest {
  name: string;
  url: string;
  description: string;
  hook_attributes: { url: string; active: boolean };
  redirect_url: string;
  setup_url: string;
  setup_on_update: boolean;
  public: boolean;
  default_permissions: Record<string, PermissionLevel>;
  default_events: string[];
}

/** Where the first-run page's routes live: GitHub sends the browser back to them. */
export const SETUP_PATHS = {
  page: "/ui/setup",
  appCreated: "/ui/setup/app-created",
  installed: "/ui/setup/installed",
} as const;

/** GitHub App names: at most 34 characters (GitHub refuses longer ones when registering). */
export const APP_NAME_MAX = 34;

/** A name GitHub will accept and the user will recognise: the coordinator's host, shortened. */
export function defaultAppName(publicUrl: string): string {
  const host = new URL(publicUrl).hostname.replace(/\.workers\.dev$/, "");
  const name = `Edgerunner ${host}`;
  return name.length <= APP_NAME_MAX ? name : name.slice(0, APP_NAME_MAX).replace(/[.-]+$/, "");
}

export function buildAppManifest(input: { publicUrl: string; name: string; features: AppFeatures }): AppManifest {
  const base = input.publicUrl.replace(/\/+$/, "");
  const permissions = Object.fromEntries(permissionsNeeded(input.features).map((p) => [p.permission, p.level]));
  return {
    name: input.name,
    url: base,
    description: `Ephemeral self-hosted GitHub Actions runners, coordinated by Edgerunner at ${base}.`,
    hook_attributes: { url: webhookUrlFor(base), active: true },
    redirect_url: `${base}${SETUP_PATHS.appCreated}`,
    setup_url: `${base}${SETUP_PATHS.installed}`,
    // Back to the page after the user changes the installation's repositories, to add the new ones.
    setup_on_update: true,
    public: false,
    default_permissions: permissions,
    default_events: [...APP_EVENTS],
  };
}

/** Whose App it is: the signed-in GitHub user's, or an organization's (GitHub needs its owner rights). */
export type AppOwner = { kind: "user" } | { kind: "organization"; login: string };

/**
 * Where the browser posts the manifest: `<web>/settings/apps/new` for the user's own App,
 * `<web>/organizations/<org>/settings/apps/new` for an organization's; the same paths on GHES.
 */
export function manifestPostUrl(webBaseUrl: string, owner: AppOwner, state: string): string {
  const base = webBaseUrl.replace(/\/+$/, "");
  const path = owner.kind === "user" ? "/settings/apps/new" : `/organizations/${encodeURIComponent(owner.login)}/settings/apps/new`;
  return `${base}${path}?state=${encodeURIComponent(state)}`;
}

/** The App's page where it is installed on an account (GitHub's `html_url` plus `/installations/new`). */
export const installUrl = (htmlUrl: string): string => `${htmlUrl.replace(/\/+$/, "")}/installations/new`;

/** Why a PUBLIC_URL will not receive GitHub's webhooks, or null when it may. */
export function unreachableByGithub(publicUrl: string): string | null {
  const url = new URL(publicUrl);
  const host = url.hostname.replace(/^\[|\]$/g, "");
  if (host === "localhost" || host === "::1" || /^127\./.test(host) || host.endsWith(".localhost") || host.endsWith(".test")) {
    return `PUBLIC_URL is ${url.origin}, which GitHub cannot reach: the App will be created, but its webhook deliveries will fail until PUBLIC_URL is a public address (deploy with npx edgerunner setup, or put a tunnel such as cloudflared in front of this coordinator and set PUBLIC_URL to it)`;
  }
  return null;
}
