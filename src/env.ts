import type { ScaleSet } from "./scaleset/scaleset-object";

/** Bindings, vars and secrets the Worker runs with (see wrangler.toml and .dev.vars.example). */
export interface Env {
  DB: D1Database;
  SCALE_SET: DurableObjectNamespace<ScaleSet>;
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
  /** The least severe log lines written: debug, info (default), warn or error. Logs read it from process.env (see observability/log.ts). */
  LOG_LEVEL?: string;
  // Optional timing knobs, in seconds (see src/scaleset/settings.ts for defaults).
  RECONCILE_INTERVAL_SECONDS?: string;
  NUDGE_DELAY_SECONDS?: string;
  SCALE_DOWN_IDLE_SECONDS?: string;
  OPERATION_POLL_SECONDS?: string;
  STUCK_GRACE_SECONDS?: string;
  ORPHAN_CHECK_SECONDS?: string;
  CREATE_BACKOFF_SECONDS?: string;
  CREATE_FAILURE_LIMIT?: string;
  STALE_JOB_SECONDS?: string;
  LISTEN_REARM_SECONDS?: string;
}

/** `requestId` is set for every request by src/http/request-id.ts. */
export type AppEnv = { Bindings: Env; Variables: { requestId: string } };
