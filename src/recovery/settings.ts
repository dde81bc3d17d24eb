import type { Env } from "../env";
import { readRetentionSettings } from "../retention/settings";
import { type BackstopPolicy, DEFAULT_BACKSTOP } from "./backstop";
import type { WalkPolicy } from "./delivery-walk";

/**
 * Delivery recovery's settings (docs/github.md "Lost deliveries"), from the Worker's vars. A value
 * that is not a number falls back to its default.
 */
export interface RecoverySettings {
  /** How often the recovery object looks (DELIVERY_RECOVERY_SECONDS; 0: never). */
  intervalMs: number;
  /** Deliveries listed per page (GitHub allows 100). */
  perPage: number;
  /** Pages one watch's walks read per pass. */
  pagesPerWatch: number;
  /** Failed deliveries fetched back per pass, all watches together (the rest go on in the next pass). */
  fetchesPerPass: number;
  /** GitHub calls one credential makes per pass, at most. */
  callsPerCredential: number;
  /** Hooks looked at at once (of the six connections an invocation has). */
  concurrency: number;
  /** How often a hook not found (or not readable) is looked for again. */
  hookRecheckMs: number;
  /** A pending delivery whose fetch failed this many times is given up (recorded refused). */
  maxFetchAttempts: number;
  /** Retention's windows: a delivery older than DELIVERY_RETENTION_DAYS may have been stored and pruned. */
  deliveryRetentionMs: number;
  retentionDays: number;
  walk: Omit<WalkPolicy, "maxAgeMs">;
  backstop: BackstopPolicy & {
    /** How often the repositories it looks at are found again. */
    discoverMs: number;
    /** A repository counts as active when it had a job or a push this recently. */
    activeMs: number;
    /** Repositories asked for per organization (most recently pushed first). */
    reposPerOrg: number;
  };
}

const seconds = (value: string | undefined, fallback: number): number => {
  const n = Number(value);
  return value !== undefined && value !== "" && Number.isFinite(n) && n >= 0 ? n * 1000 : fallback * 1000;
};

const DAY_MS = 86_400_000;

/** Whether an API URL is a GitHub Enterprise Server's: neither github.com's nor a GHE.com tenant's. */
export function isEnterpriseServer(apiBaseUrl: string): boolean {
  try {
    const host = new URL(apiBaseUrl).hostname.toLowerCase();
    return host !== "api.github.com" && !host.endsWith(".ghe.com");
  } catch {
    return false;
  }
}

/** How long GitHub keeps deliveries it can show and redeliver: 3 days on github.com and GHE.com, 7 on GitHub Enterprise Server. */
export const githubRetentionMs = (apiBaseUrl: string): number => (isEnterpriseServer(apiBaseUrl) ? 7 : 3) * DAY_MS;

export function recoverySettings(env: Partial<Env>): RecoverySettings {
  const retention = readRetentionSettings(env).settings;
  return {
    intervalMs: seconds(env.DELIVERY_RECOVERY_SECONDS, 60),
    perPage: 100,
    pagesPerWatch: 10,
    fetchesPerPass: 100,
    callsPerCredential: 60,
    concurrency: 3,
    hookRecheckMs: 10 * 60_000,
    maxFetchAttempts: 5,
    deliveryRetentionMs: retention.deliveryRetentionDays * DAY_MS,
    retentionDays: retention.retentionDays,
    // GitHub shows a delivery once its attempt is over: up to 10 s after its time (30 s on GHES).
    walk: { overlapMs: 60_000, firstLookBackMs: DAY_MS },
    backstop: { ...DEFAULT_BACKSTOP, discoverMs: 10 * 60_000, activeMs: 7 * DAY_MS, reposPerOrg: 20 },
  };
}
