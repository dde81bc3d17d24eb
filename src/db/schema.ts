// Every table in one file, over the house's ~400 lines (~750) on purpose: drizzle-kit generates the
// migrations from this one schema (drizzle.config.ts), the tables reference each other, and it is
// declarations only, read as the database's map. Behaviour lives in the stores beside it.

import { sql } from "drizzle-orm";
import { index, integer, primaryKey, real, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import type { MachineShape } from "../shapes/machine-shape";
import type { ShapeBounds } from "../shapes/shape-bounds";
import { usageDays } from "./metrics/usage-schema";
import { deliveryRecoveries, deliveryWatches, recoveryLastPass } from "./recovery/schema";

// Timestamps are unix milliseconds; columns ending in `_enc` hold values sealed by
// crypto/secret-box.ts and are never returned by the API.

const createdAt = () => integer("created_at").notNull();
const updatedAt = () => integer("updated_at").notNull();

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

/**
 * Each credential's share of GitHub's secondary limit in the current budget window: the points
 * reserved so far (every isolate and scale set object reserves here before it asks for JIT
 * configs), and what the last reservation got (read back by the statement that made it).
 */
export const githubBudget = sqliteTable("github_budget", {
  credentialId: text("credential_id")
    .primaryKey()
    .references(() => githubCredentials.id, { onDelete: "cascade" }),
  windowStart: integer("window_start").notNull(),
  pointsUsed: integer("points_used").notNull(),
  lastGrant: integer("last_grant").notNull(),
  /**
   * What GitHub's own secondary-limit answers taught: points a minute this credential may spend,
   * cut when GitHub refused a call the budget let through, growing back from `learned_at` to the
   * configured figure (github/budget.ts, effectivePointsPerMinute). Null: nothing learned.
   */
  learnedPointsPerMinute: integer("learned_points_per_minute"),
  learnedAt: integer("learned_at"),
});

/**
 * Each scale set's last ask of its credential's budget: how many JIT configs it wanted and got,
 * and all it got in that window. Read by the next reservation on the credential to keep a fair
 * share of the window for scale sets that asked recently and fell short (github/budget.ts).
 */
export const githubBudgetDemand = sqliteTable(
  "github_budget_demand",
  {
    scaleSetId: text("scale_set_id")
      .primaryKey()
      .references(() => scaleSets.id, { onDelete: "cascade" }),
    credentialId: text("credential_id")
      .notNull()
      .references(() => githubCredentials.id, { onDelete: "cascade" }),
    windowStart: integer("window_start").notNull(),
    wanted: integer("wanted").notNull(),
    granted: integer("granted").notNull(),
    grantedInWindow: integer("granted_in_window").notNull(),
  },
  (t) => [index("github_budget_demand_credential_idx").on(t.credentialId, t.windowStart)],
);

export const entityKinds = ["repository", "organization", "enterprise"] as const;
export type EntityKind = (typeof entityKinds)[number];

export const entities = sqliteTable(
  "entities",
  {
    id: text("id").primaryKey(),
    kind: text("kind", { enum: entityKinds }).notNull(),
    /** Repository owner, organization name or enterprise slug. */
    owner: text("owner").notNull(),
    /** Repository name; empty for organizations and enterprises. */
    name: text("name").notNull().default(""),
    /**
     * Lower-cased `kind:owner[/name]`: how webhooks find their entity
     * (GitHub names are case-insensitive).
     */
    lookupKey: text("lookup_key").notNull(),
    endpointName: text("endpoint_name")
      .notNull()
      .references(() => githubEndpoints.name),
    credentialsId: text("credentials_id")
      .notNull()
      .references(() => githubCredentials.id),
    webhookSecretEnc: text("webhook_secret_enc").notNull(),
    /**
     * A job this entity's webhook reports may also run on its parents' scale sets (a
     * repository's organization, and `enterprise`). Off unless registered so: a payload never
     * decides which entities' scale sets it reaches.
     */
    useParentScaleSets: integer("use_parent_scale_sets", { mode: "boolean" }).notNull().default(false),
    /** The enterprise (slug) a repository or organization belongs to, as registered here. */
    enterprise: text("enterprise"),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    uniqueIndex("entities_endpoint_lookup_idx").on(t.endpointName, t.lookupKey),
    index("entities_lookup_idx").on(t.lookupKey),
    index("entities_credentials_idx").on(t.credentialsId),
  ],
);

/**
 * An entity's credential pool: other credentials of its endpoint (more GitHub Apps installed on
 * the same account, or PATs) that mint its runners' JIT configs beside its own `credentials_id`,
 * each with its own budget, health and rate limits (docs/performance.md, "Credential pools").
 */
export const entityCredentials = sqliteTable(
  "entity_credentials",
  {
    entityId: text("entity_id")
      .notNull()
      .references(() => entities.id, { onDelete: "cascade" }),
    credentialId: text("credential_id")
      .notNull()
      .references(() => githubCredentials.id),
    addedAt: integer("added_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.entityId, t.credentialId] }), index("entity_credentials_credential_idx").on(t.credentialId)],
);

export const providers = sqliteTable("providers", {
  id: text("id").primaryKey(),
  name: text("name").notNull().unique(),
  description: text("description").notNull().default(""),
  url: text("url").notNull(),
  secretEnc: text("secret_enc").notNull(),
  /** How long one shim call may take before the coordinator gives up on it. */
  timeoutSeconds: integer("timeout_seconds").notNull().default(30),
  createdAt: createdAt(),
  updatedAt: updatedAt(),
});

export const osTypes = ["linux", "windows"] as const;
/**
 * `poll`: the object polls its forge for waiting jobs (Forgejo, which sends no workflow_job webhooks).
 */
export const scaleSetIntakes = ["webhook", "scaleset_api", "poll"] as const;
export type ScaleSetIntake = (typeof scaleSetIntakes)[number];
/** When a JIT runner's config is generated at GitHub: when its machine first asks for it, or before the machine is created. */
export const jitConfigTimings = ["on_boot", "before_create"] as const;
export type JitConfigTiming = (typeof jitConfigTimings)[number];
export const osArches = ["amd64", "arm64", "i386", "arm"] as const;

export const scaleSets = sqliteTable(
  "scale_sets",
  {
    id: text("id").primaryKey(),
    name: text("name").notNull(),
    entityId: text("entity_id")
      .notNull()
      .references(() => entities.id),
    providerId: text("provider_id")
      .notNull()
      .references(() => providers.id),
    /** JSON array of normalized labels (see intake/labels.ts). */
    labels: text("labels", { mode: "json" }).$type<string[]>().notNull(),
    minIdleRunners: integer("min_idle_runners").notNull().default(0),
    maxRunners: integer("max_runners").notNull(),
    image: text("image").notNull(),
    flavor: text("flavor").notNull(),
    osType: text("os_type", { enum: osTypes }).notNull().default("linux"),
    osArch: text("os_arch", { enum: osArches }).notNull().default("amd64"),
    /** Minutes an instance may take to become an idle runner. */
    bootstrapTimeout: integer("bootstrap_timeout").notNull().default(20),
    runnerPrefix: text("runner_prefix").notNull().default("edgerunner"),
    runnerGroup: text("runner_group").notNull().default(""),
    extraSpecs: text("extra_specs", { mode: "json" }).$type<Record<string, unknown>>().notNull(),
    enabled: integer("enabled", { mode: "boolean" }).notNull().default(true),
    priority: integer("priority").notNull().default(0),
    /**
     * Runners register with a just-in-time config (GitHub, GHES >= 3.10). Off: each machine
     * fetches a one-time registration token and runs config.sh itself.
     */
    jitConfigEnabled: integer("jit_config_enabled", { mode: "boolean" }).notNull().default(true),
    /**
     * Where its jobs come from: `webhook` (workflow_job deliveries matched by labels) or
     * `scaleset_api` (GitHub's runner scale set API: its object long-polls a message queue).
     */
    intake: text("intake", { enum: scaleSetIntakes }).notNull().default("webhook"),
    /**
     * With JIT: `on_boot` mints each runner's config when its machine first asks for it (the
     * metadata route, one Worker invocation per machine, paced by the GitHub budget);
     * `before_create` mints it in the scale set object before the shim create (scaleset_api
     * intake always does: its JIT comes from the scale set API's own endpoint).
     */
    jitConfigTiming: text("jit_config_timing", { enum: jitConfigTimings }).notNull().default("on_boot"),
    /**
     * How long its machines take from create to first asking for their runner, set by hand. Null:
     * learned from its machines (p90 of recent ones). On-boot creates are paced to mint within it.
     */
    bootTimeSeconds: integer("boot_time_seconds"),
    /** Min idle on a schedule (scaleset/schedule): the latest entry that matched wins, `min_idle_runners` otherwise. */
    schedules: text("schedules", { mode: "json" }).$type<MinIdleScheduleEntry[]>().notNull().default([]),
    /** Machines older than this are deleted unless their runner is on a job (0: never). */
    maxRunnerLifetimeSeconds: integer("max_runner_lifetime_seconds").notNull().default(86_400),
    /** A lifetime cap that applies even to a runner on its job (null: none). */
    runnerLifetimeHardCapSeconds: integer("runner_lifetime_hard_cap_seconds"),
    /** The spend guard: machine-hours a UTC day after which no more machines are created (null: no cap). */
    maxMachineHoursPerDay: real("max_machine_hours_per_day"),
    /** When an admin last lifted the spend guard (it stays lifted for the rest of that UTC day). */
    spendResetAt: integer("spend_reset_at"),
    /**
     * Gitea's act_runner or Forgejo's forgejo-runner binary for this scale set's machines (neither
     * forge publishes a runner-download API): null means the documented default release.
     */
    runnerDownloadUrl: text("runner_download_url"),
    /** Its SHA-256 (hex), checked by the install script before the binary runs. */
    runnerDownloadSha256: text("runner_download_sha256"),
    /**
     * A shaped scale set's bounds (src/shapes/shape-bounds.ts): each job says its machine's shape
     * in a `<key>=` label and gets a machine of its own. Null: every machine is `flavor` and `image`.
     */
    shape: text("shape", { mode: "json" }).$type<ShapeBounds>(),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [uniqueIndex("scale_sets_entity_name_idx").on(t.entityId, t.name), index("scale_sets_provider_idx").on(t.providerId)],
);

export const instanceStatuses = [
  "pending_create",
  "creating",
  "running",
  "stopped",
  "error",
  "pending_delete",
  "pending_force_delete",
  "deleting",
  "deleted",
  "unknown",
] as const;
export type InstanceStatus = (typeof instanceStatuses)[number];

export const runnerStatuses = ["pending", "installing", "idle", "active", "failed", "terminated", "offline", "online", "unknown"] as const;
export type RunnerStatus = (typeof runnerStatuses)[number];

export interface InstanceAddress {
  address: string;
  type: "public" | "private";
}

export const instances = sqliteTable(
  "instances",
  {
    id: text("id").primaryKey(),
    name: text("name").notNull().unique(),
    // Live instances block deleting their scale set (checked by the API); the history of
    // deleted ones goes with it.
    scaleSetId: text("scale_set_id")
      .notNull()
      .references(() => scaleSets.id, { onDelete: "cascade" }),
    /** The cloud's id for the machine, once the shim has reported one. */
    providerId: text("provider_id"),
    status: text("status", { enum: instanceStatuses }).notNull(),
    runnerStatus: text("runner_status", { enum: runnerStatuses }).notNull(),
    /** When the runner status last changed: how long an idle runner has idled. */
    runnerStatusChangedAt: integer("runner_status_changed_at"),
    /**
     * GitHub's runner id (GARM calls it agent id), only as GitHub gave it: the JIT config answer,
     * or GitHub's own runner found under this instance's name.
     */
    agentId: integer("agent_id"),
    /**
     * The runner id the machine reported (a registration-token runner's `agentId` from config.sh).
     * A claim: never used to remove a runner until GitHub confirms the runner has this name.
     */
    reportedAgentId: integer("reported_agent_id"),
    /** The runner's just-in-time configuration from GitHub, sealed. */
    jitConfigEnc: text("jit_config_enc"),
    /** The JIT config is minted when the machine first asks for it (scale set `jit_config_timing: on_boot`). */
    jitOnBoot: integer("jit_on_boot", { mode: "boolean" }).notNull().default(false),
    /** When a request claimed the one mint of this instance's JIT config (null: no mint under way or done). */
    jitClaimedAt: integer("jit_claimed_at"),
    /**
     * When the machine last asked for its on-boot JIT config, or when it was minted: the
     * bootstrap clock of a machine waiting in line for the GitHub budget starts here.
     */
    jitAskedAt: integer("jit_asked_at"),
    /** When the machine first asked for its runner: create to here is its boot time. */
    bootedAt: integer("booted_at"),
    /** When its runner first reported idle (create → online). */
    onlineAt: integer("online_at"),
    /** The credential (of its entity's pool) that minted its runner: the runner's cleanup goes through it. */
    jitCredentialsId: text("jit_credentials_id"),
    addresses: text("addresses", { mode: "json" }).$type<InstanceAddress[]>().notNull(),
    osType: text("os_type"),
    osName: text("os_name"),
    osVersion: text("os_version"),
    osArch: text("os_arch"),
    createAttempt: integer("create_attempt").notNull().default(1),
    /** When the create attempt's one registration token was claimed (runners without JIT). */
    registrationTokenServedAt: integer("registration_token_served_at"),
    /** That token, sealed, for the machine's retry while it bootstraps (runner/registration-token-store.ts). */
    registrationTokenEnc: text("registration_token_enc"),
    statusMessage: text("status_message"),
    providerFault: text("provider_fault"),
    /** The GitHub job this runner is serving (GitHub's id, as shown). */
    jobId: integer("job_id"),
    /** That job's row (jobs.seq): the one whose delivery could reach this instance's scale set. */
    jobSeq: integer("job_seq"),
    /** Forgejo: the handle of the waiting job this ephemeral runner was made for (`forgejo-runner one-job --handle`). */
    forgeJobHandle: text("forge_job_handle"),
    /** A shaped scale set's machine: the shape and flavor it was made as (src/shapes/machine-shape.ts). */
    shape: text("shape", { mode: "json" }).$type<MachineShape>(),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
    statusChangedAt: integer("status_changed_at").notNull(),
  },
  (t) => [
    // A scale set's instances by status (every snapshot), and those deleted since a time (the spend
    // guard's machine-hours today) without reading the weeks of deleted ones retention keeps. The
    // (scale_set_id, status) index it begins with is gone: each index is a row written per change.
    // Retention reaches deleted instances through it too, scale set by scale set: a
    // (status, status_changed_at) index cost a row written on every status change (dropped, migration 0029).
    index("instances_scale_set_status_changed_idx").on(t.scaleSetId, t.status, t.statusChangedAt),
    // No index on job_id (dropped in migration 0028): nothing looks an instance up by it.
    index("instances_job_seq_idx").on(t.jobSeq),
  ],
);

/**
 * Append-only: every change of an instance's status or runner status, with why. Keyed by the
 * instance and a number that grows within it, WITHOUT ROWID since migration 0029 (drizzle cannot
 * say so): one B-tree, so a transition is one row written, not a row and its index entry.
 */
export const instanceTransitions = sqliteTable(
  "instance_transitions",
  {
    instanceId: text("instance_id")
      .notNull()
      .references(() => instances.id, { onDelete: "cascade" }),
    /** Grows within the instance (src/db/instance-store.ts numbers them); rows of 0028 kept theirs. */
    id: integer("id").notNull(),
    at: integer("at").notNull(),
    field: text("field", { enum: ["status", "runner_status"] }).notNull(),
    fromValue: text("from_value"),
    toValue: text("to_value").notNull(),
    reason: text("reason").notNull(),
  },
  (t) => [primaryKey({ columns: [t.instanceId, t.id] })],
);

export const jobStatuses = ["queued", "waiting", "in_progress", "completed"] as const;
export type JobStatus = (typeof jobStatuses)[number];

/**
 * Where a job row came from: a `workflow_job` webhook (its id is the forge's workflow job id), a
 * runner scale set API queue message (its id is the runner request id, another number space) or a
 * forge's list of waiting jobs polled by the object (`poll`, Forgejo: its id is Forgejo's job id).
 */
export const jobSources = ["webhook", "scaleset_api", "poll"] as const;
export type JobSource = (typeof jobSources)[number];

/**
 * One entity's view of a GitHub job. A row belongs to the entity whose delivery brought it, for
 * good: it is keyed by (entity, source, GitHub's id), so a delivery signed by another entity
 * can neither advance it nor claim its id first (docs/security.md). The same job reported by a
 * repository's hook and its organization's hook is two rows, each routed in its own signer's scope.
 */
export const jobs = sqliteTable(
  "jobs",
  {
    /** The row's own id (GitHub's id is not unique here: see above). */
    seq: integer("seq").primaryKey({ autoIncrement: true }),
    source: text("source", { enum: jobSources }).notNull().default("webhook"),
    /** GitHub's workflow job id, or the runner request id for `scaleset_api` rows. */
    id: integer("id").notNull(),
    runId: integer("run_id").notNull(),
    runAttempt: integer("run_attempt").notNull().default(1),
    name: text("name").notNull().default(""),
    workflowName: text("workflow_name"),
    repository: text("repository").notNull(),
    owner: text("owner").notNull(),
    labels: text("labels", { mode: "json" }).$type<string[]>().notNull(),
    status: text("status", { enum: jobStatuses }).notNull(),
    conclusion: text("conclusion"),
    runnerName: text("runner_name"),
    runnerId: integer("runner_id"),
    /** The entity whose delivery brought the job (its signer), or the scale set API scale set's entity. */
    entityId: text("entity_id").references(() => entities.id, { onDelete: "set null" }),
    /** Null while unmatched: no enabled scale set has all of the job's labels. */
    scaleSetId: text("scale_set_id").references(() => scaleSets.id, { onDelete: "set null" }),
    queuedAt: integer("queued_at"),
    startedAt: integer("started_at"),
    completedAt: integer("completed_at"),
    /** Why intake could not take the job as it came (a queue item that failed validation), if so. */
    problem: text("problem"),
    /** Why its shaped scale set makes it no machine (a shape outside the bounds, no flavor fits), if so. */
    refusal: text("refusal"),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    uniqueIndex("jobs_entity_source_id_idx").on(t.entityId, t.source, t.id),
    index("jobs_scale_set_status_idx").on(t.scaleSetId, t.status),
    // No index on status alone: (status, updated_at) cost a row written on every change of every
    // job (dropped, migration 0029). Retention walks the oldest rows by seq; lookups by status go
    // through the scale set's index.
    index("jobs_runner_name_idx").on(t.runnerName),
    index("jobs_id_idx").on(t.id),
  ],
);

// WITHOUT ROWID since migration 0028 (drizzle cannot say so): one B-tree, a row written less per delivery.
export const webhookDeliveries = sqliteTable(
  "webhook_deliveries",
  {
    deliveryId: text("delivery_id").primaryKey(),
    event: text("event").notNull(),
    action: text("action"),
    receivedAt: integer("received_at").notNull(),
    outcome: text("outcome").notNull(),
    jobId: integer("job_id"),
  },
  (t) => [index("webhook_deliveries_received_idx").on(t.receivedAt)],
);

/**
 * Named monotonic counters (`webhook.rejected.<reason>`, …): what was refused without
 * storing what was refused.
 */
export const counters = sqliteTable("counters", {
  name: text("name").primaryKey(),
  value: integer("value").notNull().default(0),
  updatedAt: updatedAt(),
});

/**
 * What the last retention run (src/retention/) did: one row (id 1), replaced by every run, so
 * /metrics shows it whichever isolate answers.
 */
export const retentionLastRun = sqliteTable("retention_last_run", {
  id: integer("id").primaryKey(),
  startedAt: integer("started_at").notNull(),
  durationMs: integer("duration_ms").notNull(),
  /** JSON object: rows deleted per table. */
  deleted: text("deleted", { mode: "json" }).$type<Record<string, number>>().notNull(),
  /** D1 queries the run spent. */
  queries: integer("queries").notNull(),
  /** 1 when nothing eligible was left; 0 when the run stopped at its query cap (the next run goes on). */
  complete: integer("complete", { mode: "boolean" }).notNull(),
  /** Why the run stopped early, when a statement failed. */
  error: text("error"),
});

export const tokenScopes = ["read", "admin"] as const;
export type TokenScope = (typeof tokenScopes)[number];

/**
 * Named API tokens (besides ADMIN_TOKEN). Only the SHA-256 of a token is stored: the token is
 * shown once, when it is created. A revoked token keeps its row (the audit trail names it);
 * its name can be taken again.
 */
export const apiTokens = sqliteTable(
  "api_tokens",
  {
    id: text("id").primaryKey(),
    name: text("name").notNull(),
    scope: text("scope", { enum: tokenScopes }).notNull(),
    /** hex SHA-256 of the whole token (see src/http/api-token.ts). */
    tokenHash: text("token_hash").notNull().unique(),
    createdAt: createdAt(),
    /** The actor that created it (same form as the audit trail's). */
    createdBy: text("created_by").notNull(),
    expiresAt: integer("expires_at"),
    /** Updated at most once a minute per token. */
    lastUsedAt: integer("last_used_at"),
    revokedAt: integer("revoked_at"),
  },
  (t) => [uniqueIndex("api_tokens_active_name_idx").on(t.name).where(sql`revoked_at IS NULL`)],
);

/**
 * The audit trail: one row per authenticated admin write (API and dashboard), whatever its
 * result. `changes` is the request's JSON with secrets replaced (src/audit/redact.ts); a refused
 * write (4xx) keeps only `refusal`, and at most a few per actor a minute (src/audit/refusal.ts).
 */
export const auditLog = sqliteTable(
  "audit_log",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    at: integer("at").notNull(),
    /** `admin_token`, `token:<name>`, `access:<email>` or `dashboard` (a dashboard login with the admin token). */
    actor: text("actor").notNull(),
    /** `api` or `dashboard`: where the write came from. */
    via: text("via", { enum: ["api", "dashboard"] }).notNull(),
    method: text("method").notNull(),
    /** The route's pattern, e.g. `/api/v1/providers/:name`. */
    route: text("route").notNull(),
    /** The path as requested. */
    path: text("path").notNull(),
    /** The id or name of the resource written, when there is one. */
    resource: text("resource"),
    status: integer("status").notNull(),
    requestId: text("request_id").notNull(),
    /** JSON `{body?, query?}` with secrets redacted; null when the request carried neither, or was refused. */
    changes: text("changes"),
    /** A refused write's (4xx) JSON `{code, error}` of the answer, at most 256 bytes; null otherwise. */
    refusal: text("refusal"),
  },
  (t) => [
    index("audit_log_at_idx").on(t.at),
    index("audit_log_actor_idx").on(t.actor, t.id),
    index("audit_log_resource_idx").on(t.resource, t.id),
    // The throttle's count of an actor's refusals in the last minute: a range of a few rows of
    // this index, which holds refused entries only (the WHERE must match the count's exactly).
    index("audit_log_refused_idx").on(t.actor, t.at).where(sql`status BETWEEN 400 AND 499`),
  ],
);

/**
 * One entry of a scale set's min idle schedule: from each time `cron` matches in `timezone` (IANA),
 * `min_idle_runners` holds until another entry matches. `prewarm`: it starts ahead by the scale
 * set's boot time, so the runners are idle when the time comes.
 */
export interface MinIdleScheduleEntry {
  name: string;
  cron: string;
  timezone: string;
  min_idle_runners: number;
  prewarm: boolean;
}

/** Histogram buckets kept in D1 (observability/histograms): one row per bucket, counts not cumulative. */
export const metricHistograms = sqliteTable(
  "metric_histograms",
  {
    metric: text("metric").notNull(),
    scaleSetId: text("scale_set_id").notNull(),
    bucket: integer("bucket").notNull(),
    count: integer("count").notNull().default(0),
    sum: real("sum").notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.metric, t.scaleSetId, t.bucket] })],
);

/** What a scale set looked like every few minutes: the dashboard's runners-by-state chart. */
export const scaleSetSamples = sqliteTable(
  "scale_set_samples",
  {
    scaleSetId: text("scale_set_id").notNull(),
    at: integer("at").notNull(),
    idle: integer("idle").notNull().default(0),
    busy: integer("busy").notNull().default(0),
    booting: integer("booting").notNull().default(0),
    other: integer("other").notNull().default(0),
    minIdle: integer("min_idle").notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.scaleSetId, t.at] })],
);

export const schema = {
  deliveryWatches,
  deliveryRecoveries,
  recoveryLastPass,
  githubEndpoints,
  githubCredentials,
  githubCredentialState,
  githubCache,
  githubApps,
  githubAppInstallations,
  githubAppManifests,
  entities,
  providers,
  scaleSets,
  instances,
  instanceTransitions,
  jobs,
  webhookDeliveries,
  counters,
  githubBudget,
  retentionLastRun,
  apiTokens,
  auditLog,
  metricHistograms,
  scaleSetSamples,
  usageDays,
};
