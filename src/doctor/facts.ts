import type { EntityKind } from "../db/directory/schema";
import type { Forge } from "../db/github/schema";
import type { ScaleSetIntake } from "../db/scaleset/schema";
import type { UsageReport } from "../usage/usage-report";

/**
 * What the setup check looked at, gathered beforehand (src/doctor/gather/) so the rules that
 * judge it stay plain functions over plain data. Nothing here is a secret: a secret's presence
 * and shape (its length, how many bytes it decodes to) are facts, its value is not.
 */

/**
 * The outcome of one call to another system. `error.kind`:
 * - `refused`: it answered with an error status (GitHub 403, a shim's 401);
 * - `unreachable`: no usable answer (network, timeout, 5xx after retries);
 * - `malformed`: an answer that is not what the protocol says;
 * - `rate_limited`: GitHub asked us to wait until `until`;
 * - `failing`: the credentials are marked failing, so nothing was sent;
 * - `not_sent`: refused before sending (credentials bound to another API URL);
 * - `out_of_time`: the report's time budget ran out before this call started;
 * - `out_of_subrequests`: the request's subrequests ran out before this call started (the Free
 *   plan allows 50: a check limited to one scale set has room for it).
 */
export type Probe<T> = { ok: true; value: T; ms: number } | { ok: false; error: ProbeError; ms: number };

export type ProbeError =
  | { kind: "refused"; status: number; message: string }
  | { kind: "unreachable"; message: string }
  | { kind: "malformed"; message: string }
  | { kind: "rate_limited"; until: string }
  | { kind: "failing"; reason: string }
  | { kind: "not_sent"; message: string }
  | { kind: "out_of_time" }
  | { kind: "out_of_subrequests"; limit: number };

export interface ConfigFacts {
  /** PUBLIC_URL, trimmed; null when unset or empty. */
  publicUrl: string | null;
  /** The origin this report's request came to (null when run without a request). */
  requestOrigin: string | null;
  adminToken: { set: boolean; length: number };
  /** `bytes`: what the value decodes to as base64, null when it is not base64. */
  encryptionKey: { set: boolean; bytes: number | null };
  /** ENCRYPTION_KEYS_PREVIOUS: how many keys, and how many of them do not decode to 32 bytes. */
  previousKeys: { count: number; bad: number };
  instanceTokenSecret: { set: boolean; length: number };
  metricsToken: boolean;
  access: AccessFacts;
}

export interface AccessFacts {
  teamDomainSet: boolean;
  /** The team domain as understood (`myteam.cloudflareaccess.com`), null when unset or not a domain. */
  teamDomain: string | null;
  audSet: boolean;
  certsUrl: string | null;
  /** The team's signing keys, fetched when Access is on: how many keys came back. */
  certs: Probe<{ keys: number }> | null;
}

/** What GitHub says of an App installation (GET /app/installations/{id}). */
export interface InstallationFacts {
  account: string | null;
  accountType: string | null;
  permissions: Record<string, string>;
  events: string[];
  repositorySelection: string | null;
  suspended: boolean;
}

/** An App's own webhook (GET /app/hook/config) and its last delivery (GET /app/hook/deliveries). */
export interface AppHookFacts {
  config: Probe<{ url: string | null; contentType: string | null }>;
  lastDelivery: Probe<DeliveryFacts | null>;
}

export interface CredentialFacts {
  id: string;
  name: string;
  authType: "pat" | "app";
  appId: number | null;
  installationId: number | null;
  endpoint: string;
  /** The endpoint's API URL now, and the one the credentials were stored for (null: none recorded). */
  apiBaseUrl: string;
  boundApiUrl: string | null;
  health: "ok" | "failing";
  failureReason: string | null;
  failedAt: number | null;
  /** GitHub asked for a wait until then (unix ms), if it is still ahead. */
  blockedUntil: number | null;
  hasWebhookSecret: boolean;
  /** Their endpoint's forge (absent: github), named in what the checks say. */
  forge?: Forge;
  /** App credentials only, when asked. */
  installation: Probe<InstallationFacts> | null;
  /** App credentials with a webhook secret only, when asked. */
  appHook: AppHookFacts | null;
}

/** A webhook delivery as GitHub lists it. `statusCode` 0: GitHub got no answer. */
export interface DeliveryFacts {
  at: string;
  statusCode: number;
  status: string;
  event: string;
}

/** The entity's own hook, the one whose URL is this coordinator's webhook URL. */
export interface EntityHookFacts {
  hook: Probe<{ id: number; active: boolean; events: string[]; contentType: string | null } | null>;
  /** Asked only when the hook was found. */
  lastDelivery: Probe<DeliveryFacts | null> | null;
}

export interface EntityFacts {
  id: string;
  kind: EntityKind;
  /** Its endpoint's forge: which checks mean something for it (forge-entity-checks.ts for Gitea and Forgejo). */
  forge: Forge;
  /** As people write it: `octo/app`, `octo`, `acme`. */
  name: string;
  owner: string;
  credentialId: string;
  /** Its scale sets, by intake. */
  scaleSets: Record<ScaleSetIntake, number>;
  /** When the newest job one of its webhook deliveries brought was first recorded (unix ms). */
  lastJobAt: number | null;
  /**
   * A harmless read of its runners (one, per_page=1) with its credentials; `scopes` is the
   * classic PAT's X-OAuth-Scopes, null when GitHub sent none (a fine-grained PAT, an App).
   * On Gitea the scope's runner list, on Forgejo its waiting jobs (`scopes` null): the token works
   * and reaches the scope.
   */
  runners: Probe<{ scopes: string[] | null }> | null;
  /** Its own hook at GitHub (or Gitea), when it is one to look at (webhook intake, not fed by an App webhook, not a GitHub enterprise). */
  hook: EntityHookFacts | null;
  /** Its credential pool, oldest member first: other credentials that mint its runners' JIT configs. */
  pool: PoolMemberFacts[];
  /** How its lost deliveries are found (src/recovery/); null when no scale set takes its webhook jobs. Optional: older fixtures have none. */
  recovery?: EntityRecoveryFacts | null;
}

/** One way an entity's lost deliveries are found, and how the last look at it went. */
export interface RecoveryMeansFacts {
  kind: "repository" | "organization" | "app" | "backstop";
  /** `ok`, or what the last look found (forbidden, not_found, no_hook, rate_limited, …); null: not looked at yet. */
  status: string | null;
  detail: string | null;
  since: number | null;
  /** The backstop: why it looks instead of a hook. */
  reason?: string;
}

export interface EntityRecoveryFacts {
  means: RecoveryMeansFacts[];
  last24h: { failed: number; recovered: number; found: number };
}

/** Delivery recovery as a whole: how often it runs, and when it last did. */
export interface RecoveryFacts {
  intervalMs: number;
  lastPassAt: number | null;
}

/** A credential of an entity's pool, and the same harmless read of the entity's runners made with it. */
export interface PoolMemberFacts {
  credentialId: string;
  /** Null when the credentials are not usable (failing, or bound to another API URL): nothing was sent. */
  runners: Probe<{ scopes: string[] | null }> | null;
}

export interface ProviderFacts {
  id: string;
  name: string;
  url: string;
  capabilities: Probe<{ interfaceVersion: string; batchMax: number }> | null;
}

export interface ScaleSetFacts {
  id: string;
  name: string;
  entityId: string;
  providerId: string;
  labels: string[];
  enabled: boolean;
  intake: ScaleSetIntake;
  minIdleRunners: number;
  maxRunners: number;
  createdAt: number;
  /** Instances kept (retention drops old deleted ones), live ones, idle ones. */
  instances: { total: number; live: number; idle: number };
  /** Some runner of it reached idle or took a job. */
  cameUp: boolean;
  /** The newest fault a shim or GitHub reported for one of its machines. */
  lastFault: { instance: string; at: number; message: string } | null;
  /** Jobs routed here still queued, and since when. */
  queued: { count: number; oldestAt: number | null };
  /** Its Durable Object's own account (GET /scalesets/{id} status). */
  object: Probe<ObjectFacts> | null;
}

export interface ObjectFacts {
  createFailures: number;
  lastFailureAt: string | null;
  hardLimitedAt: string | null;
  createAllowedAt: string | null;
  listener: { sessionOpen: boolean; githubScaleSetId: number | null; failures: number; lastError: string | null } | null;
  /** The Forgejo poller (intake poll); null if it never polled. Optional: older fixtures have none. */
  poller?: { failures: number; lastError: string | null; lastPollAt: string | null } | null;
}

/** Queued jobs no scale set took, by their labels (the newest few label sets). */
export interface UnmatchedJobs {
  count: number;
  labelSets: { labels: string[]; count: number }[];
}

/** What the deployment spent this month in Cloudflare's billing units, and the plan it says it is on. */
export interface UsageFacts {
  /** `CLOUDFLARE_PLAN` as set; null when unset (Workers Paid, the default). */
  planSetting: string | null;
  /** The month so far (usage/usage-report.ts), from `usage_days` and what this isolate has not written yet. */
  report: UsageReport;
}

export interface DoctorFacts {
  now: number;
  config: ConfigFacts;
  credentials: CredentialFacts[];
  entities: EntityFacts[];
  providers: ProviderFacts[];
  scaleSets: ScaleSetFacts[];
  /** Null when the report is limited to one scale set. */
  unmatched: UnmatchedJobs | null;
  /** Optional: older fixtures have none. */
  recovery?: RecoveryFacts;
  /** Null when the report is limited to one scale set; optional: older fixtures have none. */
  usage?: UsageFacts | null;
}
