// The forge side of the database: endpoints, credentials and what every isolate shares about them
// (state, cache), and the GitHub Apps made through the manifest flow with their installations.
import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { createdAt, updatedAt } from "../columns";

/**
 * Which forge an endpoint is: GitHub (github.com or GHES), Gitea (1.24 or later) or Forgejo (15.0 or
 * later). The table keeps its name: every forge's endpoint, credentials and entities live where
 * GitHub's always have (docs/forges.md).
 */
export const forges = ["github", "gitea", "forgejo"] as const;
export type Forge = (typeof forges)[number];

export const githubEndpoints = sqliteTable("github_endpoints", {
  name: text("name").primaryKey(),
  description: text("description").notNull().default(""),
  forge: text("forge", { enum: forges }).notNull().default("github"),
  baseUrl: text("base_url").notNull(),
  apiBaseUrl: text("api_base_url").notNull(),
  uploadBaseUrl: text("upload_base_url").notNull().default(""),
  caCertBundle: text("ca_cert_bundle"),
  createdAt: createdAt(),
  updatedAt: updatedAt(),
});

export const githubCredentials = sqliteTable(
  "github_credentials",
  {
    id: text("id").primaryKey(),
    name: text("name").notNull().unique(),
    description: text("description").notNull().default(""),
    endpointName: text("endpoint_name")
      .notNull()
      .references(() => githubEndpoints.name),
    authType: text("auth_type", { enum: ["pat", "app"] }).notNull(),
    appId: integer("app_id"),
    installationId: integer("installation_id"),
    /** The PAT, or the App's private key (PEM). */
    secretEnc: text("secret_enc").notNull(),
    /**
     * An App's webhook secret, when the App's own webhook (one URL for every installation)
     * feeds the coordinator: deliveries it signs reach the entities that use these credentials.
     */
    webhookSecretEnc: text("webhook_secret_enc"),
    /**
     * The endpoint's API URL when the credentials were stored (no trailing slash): the only
     * place their secret, and anything minted with it, is ever sent (github/credential-binding.ts).
     * Null only for a row written by code older than the column: such credentials are never sent.
     */
    boundApiUrl: text("bound_api_url"),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [index("github_credentials_endpoint_idx").on(t.endpointName)],
);

/**
 * GitHub Apps this coordinator created through GitHub's App manifest flow (the first-run page,
 * src/setup/). The App's own secrets, sealed the moment GitHub handed them over: its private key
 * (copied into each installation's credentials), webhook secret (verifies its `installation`
 * deliveries before any credential of it exists) and OAuth client secret (kept, unused).
 */
export const githubApps = sqliteTable(
  "github_apps",
  {
    id: text("id").primaryKey(),
    endpointName: text("endpoint_name")
      .notNull()
      .references(() => githubEndpoints.name),
    appId: integer("app_id").notNull(),
    slug: text("slug").notNull(),
    name: text("name").notNull(),
    ownerLogin: text("owner_login").notNull(),
    htmlUrl: text("html_url").notNull(),
    clientId: text("client_id").notNull(),
    clientSecretEnc: text("client_secret_enc").notNull(),
    privateKeyEnc: text("private_key_enc").notNull(),
    webhookSecretEnc: text("webhook_secret_enc").notNull(),
    /** JSON: the permissions and events GitHub granted the App. */
    permissions: text("permissions").notNull(),
    events: text("events").notNull(),
    /** The endpoint's API URL when GitHub created the App: the only place its key is sent. */
    boundApiUrl: text("bound_api_url").notNull(),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex("github_apps_endpoint_app_idx").on(t.endpointName, t.appId)],
);

export const appInstallationStatuses = ["active", "suspended", "deleted"] as const;

/**
 * Where an App of `github_apps` is installed, as its `installation` webhooks or a look at GitHub
 * told us: the account and the repositories it covers, offered on the first-run page as
 * entities to add, and the credentials made for it.
 */
export const githubAppInstallations = sqliteTable(
  "github_app_installations",
  {
    appRowId: text("app_row_id")
      .notNull()
      .references(() => githubApps.id, { onDelete: "cascade" }),
    installationId: integer("installation_id").notNull(),
    accountLogin: text("account_login").notNull(),
    accountType: text("account_type", { enum: ["User", "Organization", "Enterprise"] }).notNull(),
    repositorySelection: text("repository_selection", { enum: ["all", "selected"] }).notNull(),
    /** JSON array of `owner/name`, as far as GitHub listed them (an `all` installation lists them too). */
    repositories: text("repositories").notNull(),
    credentialsId: text("credentials_id").references(() => githubCredentials.id, { onDelete: "set null" }),
    status: text("status", { enum: appInstallationStatuses }).notNull(),
    updatedAt: updatedAt(),
  },
  (t) => [uniqueIndex("github_app_installations_pk").on(t.appRowId, t.installationId)],
);

/**
 * One App manifest round trip: the `state` sent to GitHub (stored as its SHA-256), the dashboard
 * session it belongs to (a hash of the session's nonce), what was asked for, and once GitHub's
 * redirect came back and the code was exchanged, the App it made. A state works once, for an hour.
 */
export const githubAppManifests = sqliteTable("github_app_manifests", {
  stateHash: text("state_hash").primaryKey(),
  sessionHash: text("session_hash").notNull(),
  endpointName: text("endpoint_name").notNull(),
  /** JSON: the manifest as posted. */
  manifest: text("manifest").notNull(),
  createdAt: createdAt(),
  expiresAt: integer("expires_at").notNull(),
  /** Set while a redirect's code is being exchanged, so two tabs cannot both exchange. */
  claimedAt: integer("claimed_at"),
  appRowId: text("app_row_id").references(() => githubApps.id, { onDelete: "set null" }),
});

export const credentialHealth = ["ok", "failing"] as const;

/**
 * What every isolate must agree on about one credential: whether GitHub still accepts it,
 * the last rate-limit figures it reported, until when nobody may call GitHub with it, and
 * the App installation token minted for it (sealed). One row per credential, so a caller
 * reads all of it in the same query as the credential itself.
 */
export const githubCredentialState = sqliteTable("github_credential_state", {
  credentialId: text("credential_id")
    .primaryKey()
    .references(() => githubCredentials.id, { onDelete: "cascade" }),
  health: text("health", { enum: credentialHealth }).notNull().default("ok"),
  /** Why GitHub refused the credential (its message), while failing. */
  failureReason: text("failure_reason"),
  failedAt: integer("failed_at"),
  rateLimitLimit: integer("rate_limit_limit"),
  rateLimitRemaining: integer("rate_limit_remaining"),
  rateLimitUsed: integer("rate_limit_used"),
  rateLimitResetAt: integer("rate_limit_reset_at"),
  rateLimitResource: text("rate_limit_resource"),
  rateLimitObservedAt: integer("rate_limit_observed_at"),
  /** No call may be made with this credential before this time (rate limited). */
  blockedUntil: integer("blocked_until"),
  /** Consecutive rate-limit answers without a usable wait hint: drives exponential backoff. */
  rateLimitStrikes: integer("rate_limit_strikes").notNull().default(0),
  /** The App installation access token, sealed; reused until shortly before it expires. */
  tokenEnc: text("token_enc"),
  tokenExpiresAt: integer("token_expires_at"),
  updatedAt: updatedAt(),
});

/**
 * Slow-changing GitHub facts worth one call an hour rather than one per use (runner
 * downloads, runner group ids). Keyed by endpoint and a path-like key.
 */
export const githubCache = sqliteTable(
  "github_cache",
  {
    endpointName: text("endpoint_name")
      .notNull()
      .references(() => githubEndpoints.name, { onDelete: "cascade" }),
    key: text("key").notNull(),
    value: text("value", { mode: "json" }).$type<unknown>().notNull(),
    fetchedAt: integer("fetched_at").notNull(),
  },
  (t) => [uniqueIndex("github_cache_endpoint_key_idx").on(t.endpointName, t.key)],
);
