import type { Principal } from "./auth/principal";
import type { DeliveryRecoveryRpc } from "./recovery/rpc";
import type { ScaleSetRpc } from "./scaleset/rpc";

/** Bindings, vars and secrets the Worker runs with (see wrangler.toml and .dev.vars.example). */
export interface Env {
  DB: D1Database;
  /** One object per scale set (src/scaleset/scaleset-object.ts), typed by what callers may ask of it. */
  SCALE_SET: DurableObjectNamespace<ScaleSetRpc>;
  /** The one delivery recovery object (src/recovery/recovery-object.ts). */
  DELIVERY_RECOVERY: DurableObjectNamespace<DeliveryRecoveryRpc>;
  /** Counts dashboard login attempts per client (wrangler.toml `[[ratelimits]]`). */
  LOGIN_LIMITER: RateLimit;
  /** Counts wrong admin-API bearer tokens per client (wrangler.toml `[[ratelimits]]`). */
  ADMIN_AUTH_LIMITER: RateLimit;
  /** Bearer token for the admin API. Secret. */
  ADMIN_TOKEN: string;
  /** base64 of 32 random bytes: the AES-256-GCM key new secrets are sealed with. Secret. */
  ENCRYPTION_KEY: string;
  /** Comma-separated older keys, still accepted for opening secrets during a rotation. Secret. */
  ENCRYPTION_KEYS_PREVIOUS?: string;
  /** Public base URL of this coordinator, e.g. https://edgerunner.example.workers.dev */
  PUBLIC_URL: string;
  /** HMAC key for the tokens runner instances call back with. Secret. */
  INSTANCE_TOKEN_SECRET: string;
  /** Bearer token for GET /metrics (Prometheus); separate from ADMIN_TOKEN. Secret, optional: without it /metrics answers 503. */
  METRICS_TOKEN?: string;
  /** Cloudflare Access team, e.g. `myteam` or `myteam.cloudflareaccess.com`: with ACCESS_AUD, turns on Access sign-in (docs/operations.md). */
  ACCESS_TEAM_DOMAIN?: string;
  /** The Access application's AUD tag. */
  ACCESS_AUD?: string;
  /** What an Access identity may do: `admin` (default) or `read`. */
  ACCESS_SCOPE?: string;
  /** Where the team's signing keys are; defaults to https://<team>/cdn-cgi/access/certs (tests point it at a local JWKS). */
  ACCESS_CERTS_URL?: string;
  /** The least severe log lines written: debug, info (default), warn or error. Logs read it from process.env (see observability/log.ts). */
  LOG_LEVEL?: string;
  // Optional timing knobs, in seconds (see src/scaleset/settings.ts for defaults).
  RECONCILE_INTERVAL_SECONDS?: string;
  /** The tick of a scale set with nothing to do (no machines, no queued jobs, min idle 0): default 300. */
  IDLE_RECONCILE_INTERVAL_SECONDS?: string;
  /** The tick of an idle scale set that has had no machine for an hour (or never had one): default 1800. */
  QUIET_RECONCILE_INTERVAL_SECONDS?: string;
  /** The Workers plan: "free" keeps every invocation within the Free plan's 50 subrequests and 50 D1 queries (lib/invocation-cost.ts); "paid" (default). */
  CLOUDFLARE_PLAN?: string;
  NUDGE_DELAY_SECONDS?: string;
  SCALE_DOWN_IDLE_SECONDS?: string;
  OPERATION_POLL_SECONDS?: string;
  STUCK_GRACE_SECONDS?: string;
  ORPHAN_CHECK_SECONDS?: string;
  CREATE_BACKOFF_SECONDS?: string;
  CREATE_FAILURE_LIMIT?: string;
  STALE_JOB_SECONDS?: string;
  /**
   * At most this many outbound calls (GitHub, the shim) of one scale set object wait for response
   * headers at once, the rest queue: Cloudflare's six per invocation, which a Durable Object shares
   * across all its work. Unset or 0: no limit of ours (the platform's still applies when deployed).
   */
  OUTBOUND_CONNECTIONS_PER_OBJECT?: string;
  /**
   * GitHub secondary-limit points each credential may spend a minute on JIT configs, shared by
   * every scale set on it (GitHub allows 900; the margin is for reads and deletes). Default 810;
   * 0: no budget (a GHES with rate limits off). See docs/performance.md.
   */
  GITHUB_POINTS_PER_MINUTE?: string;
  /** Length of one budget window in seconds (default 3): the minute's points are spent in these. */
  GITHUB_BUDGET_WINDOW_SECONDS?: string;
  /**
   * Seconds a machine's credentials request may wait in line for its on-boot JIT config (the
   * GitHub budget, or another request's mint) before it is told 503 + Retry-After; default 60.
   */
  JIT_WAIT_SECONDS?: string;
  /**
   * Seconds between delivery recovery passes: failed webhook deliveries listed at GitHub and taken
   * in, and the backstop for entities whose deliveries cannot be read (default 60; 0: off;
   * docs/github.md "Lost deliveries").
   */
  DELIVERY_RECOVERY_SECONDS?: string;
  // Retention knobs (see src/retention/settings.ts and docs/retention.md).
  /** Days completed jobs and deleted instances (with their transitions) are kept; default 30. */
  RETENTION_DAYS?: string;
  /** Days webhook delivery ids are kept for the duplicate check; default 14. */
  DELIVERY_RETENTION_DAYS?: string;
  /** Days audit trail entries are kept; default 365. */
  AUDIT_RETENTION_DAYS?: string;
  /** Most D1 queries one retention run spends; default 100, at most 900. */
  RETENTION_MAX_QUERIES?: string;
  /** Most rows one retention DELETE removes; default 500. */
  RETENTION_BATCH_SIZE?: string;
  /** Seconds between scale set API listener steps when nothing else is due (0 in production; tests set it far away). */
  LISTEN_REARM_SECONDS?: string;
  /** Seconds between a Forgejo scale set's polls for waiting jobs (intake `poll`; default 5; docs/forges.md). */
  FORGEJO_POLL_INTERVAL_SECONDS?: string;
}

/**
 * `requestId` is set for every request by src/http/request-id.ts; `principal` for every
 * authenticated admin API request by src/http/admin-auth.ts.
 */
export type AppEnv = { Bindings: Env; Variables: { requestId: string; principal?: Principal } };
