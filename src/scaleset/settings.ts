import type { Env } from "../env";
import { DEFAULT_GITHUB_BUDGET, type GithubBudgetPolicy } from "../github/budget/budget";
import type { CreateBackoffPolicy } from "./backoff";
import { DEFAULT_STALE_JOBS, type StaleJobPolicy } from "./stale-jobs/stale-jobs";

/** Timing knobs for every scale set, from optional Worker vars (seconds), with defaults. */
export interface ScaleSetSettings {
  tickMs: number;
  /** The tick of a scale set with nothing to do (idle-tick.ts); never shorter than `tickMs`. */
  idleTickMs: number;
  /** The tick of one that has had no machine for an hour or more (idle-tick.ts); never shorter than `idleTickMs`. */
  quietTickMs: number;
  /** How soon after a nudge the object reconciles (0 in production; tests drive alarms themselves). */
  nudgeDelayMs: number;
  scaleDownIdleMs: number;
  operationPollMs: number;
  stuckGraceMs: number;
  orphanCheckMs: number;
  createBackoff: CreateBackoffPolicy;
  staleJobs: StaleJobPolicy;
  /** Delay before the scale set API listener's next poll (0 in production: one poll always in flight; tests drive it). */
  listenRearmMs: number;
  /** Between a Forgejo scale set's polls for waiting jobs (intake `poll`, src/forges/forgejo/poller.ts). */
  forgejoPollMs: number;
  /** Outbound calls (shim, GitHub) run at most this many at a time per scale set. */
  concurrency: number;
  /** At most this many of the object's outbound calls wait for headers at once (null: no limit of ours). */
  outboundConnections: number | null;
  /** GitHub points each credential may spend, in windows shared by every object (null: `GITHUB_POINTS_PER_MINUTE=0`, no budget). */
  githubBudget: GithubBudgetPolicy | null;
}

const seconds = (value: string | undefined, fallback: number): number => {
  const n = Number(value);
  return value !== undefined && value !== "" && Number.isFinite(n) && n >= 0 ? n * 1000 : fallback * 1000;
};

export function scaleSetSettings(env: Partial<Env>): ScaleSetSettings {
  const limit = Number(env.CREATE_FAILURE_LIMIT);
  const outbound = Number(env.OUTBOUND_CONNECTIONS_PER_OBJECT);
  const points = Number(env.GITHUB_POINTS_PER_MINUTE);
  const pointsPerMinute =
    env.GITHUB_POINTS_PER_MINUTE !== undefined && env.GITHUB_POINTS_PER_MINUTE !== "" && Number.isFinite(points) && points >= 0
      ? Math.floor(points)
      : DEFAULT_GITHUB_BUDGET.pointsPerMinute;
  const windowMs = seconds(env.GITHUB_BUDGET_WINDOW_SECONDS, DEFAULT_GITHUB_BUDGET.windowMs / 1000);
  const tickMs = seconds(env.RECONCILE_INTERVAL_SECONDS, 30);
  return {
    tickMs,
    idleTickMs: Math.max(tickMs, seconds(env.IDLE_RECONCILE_INTERVAL_SECONDS, 300)),
    quietTickMs: Math.max(tickMs, seconds(env.IDLE_RECONCILE_INTERVAL_SECONDS, 300), seconds(env.QUIET_RECONCILE_INTERVAL_SECONDS, 1800)),
    nudgeDelayMs: seconds(env.NUDGE_DELAY_SECONDS, 0),
    scaleDownIdleMs: seconds(env.SCALE_DOWN_IDLE_SECONDS, 300),
    operationPollMs: seconds(env.OPERATION_POLL_SECONDS, 120),
    stuckGraceMs: seconds(env.STUCK_GRACE_SECONDS, 120),
    orphanCheckMs: seconds(env.ORPHAN_CHECK_SECONDS, 300),
    createBackoff: {
      intervalMs: seconds(env.CREATE_BACKOFF_SECONDS, 10),
      hardLimit: Number.isInteger(limit) && limit > 0 ? limit : 5,
    },
    staleJobs: { ...DEFAULT_STALE_JOBS, staleAfterMs: seconds(env.STALE_JOB_SECONDS, DEFAULT_STALE_JOBS.staleAfterMs / 1000) },
    listenRearmMs: seconds(env.LISTEN_REARM_SECONDS, 0),
    forgejoPollMs: Math.max(1_000, seconds(env.FORGEJO_POLL_INTERVAL_SECONDS, 5)),
    concurrency: 16,
    outboundConnections: Number.isInteger(outbound) && outbound > 0 ? outbound : null,
    githubBudget: pointsPerMinute > 0 ? { pointsPerMinute, windowMs: windowMs > 0 ? windowMs : DEFAULT_GITHUB_BUDGET.windowMs } : null,
  };
}
