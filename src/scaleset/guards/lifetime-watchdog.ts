import type { InstanceStatus, RunnerStatus } from "../../db/runner/schema";

/**
 * The machine lifetime watchdog: a machine older than its scale set's `max_runner_lifetime_seconds`
 * is sent to deletion unless its runner is on a job; `runner_lifetime_hard_cap_seconds`, when set,
 * applies even then. Pure: the planner (reconcile.ts) asks it about each instance it would
 * otherwise keep, and turns a verdict into an ordinary `mark_delete`.
 */

/** Why a machine overstayed, as read from its instance row (the log line's and the counter's `reason`). */
export const reapReasons = ["stuck_after_job", "never_picked_up_job", "never_bootstrapped", "leak", "hard_cap"] as const;
export type ReapReason = (typeof reapReasons)[number];

export interface LifetimePolicy {
  /** Machines older than this go unless their runner is on a job; null: never. */
  maxLifetimeMs: number | null;
  /** Machines older than this go whatever their runner does; null: no hard cap. */
  hardCapMs: number | null;
}

export const NO_LIFETIME_LIMIT: LifetimePolicy = { maxLifetimeMs: null, hardCapMs: null };

/** The policy from the scale set's columns: a lifetime of 0 means never. */
export function lifetimePolicy(maxLifetimeSeconds: number, hardCapSeconds: number | null): LifetimePolicy {
  return {
    maxLifetimeMs: maxLifetimeSeconds > 0 ? maxLifetimeSeconds * 1000 : null,
    hardCapMs: hardCapSeconds !== null && hardCapSeconds > 0 ? hardCapSeconds * 1000 : null,
  };
}

/** What the watchdog reads of an instance. */
export interface LifetimeFacts {
  status: InstanceStatus;
  runnerStatus: RunnerStatus;
  createdAt: number;
  /** The runner is on a job now (runner active, or its job in progress). */
  onJob: boolean;
  /** The runner took a job at some point (the instance names one). */
  hadJob: boolean;
}

export interface Reap {
  reason: ReapReason;
  ageMs: number;
  /**
   * Delete even though GitHub says the runner is busy: only a hard-capped runner on its job.
   * Anything else stays an ordinary delete, so a runner that takes a job meanwhile is kept.
   */
  force: boolean;
}

/** The age at which this instance is reaped (null: never), given whether it is on a job. */
function limitFor(onJob: boolean, policy: LifetimePolicy): number | null {
  if (onJob) return policy.hardCapMs;
  const limits = [policy.maxLifetimeMs, policy.hardCapMs].filter((l): l is number => l !== null);
  return limits.length ? Math.min(...limits) : null;
}

/** Why an instance that overstayed is still there, from its row alone. */
export function overstayReason(i: Omit<LifetimeFacts, "createdAt">): ReapReason {
  if (i.onJob) return "hard_cap";
  // The provider lost track of the machine: nothing of ours will ever clean it up otherwise.
  if (i.status === "unknown") return "leak";
  if (i.hadJob) return "stuck_after_job";
  if (i.status === "pending_create" || i.status === "creating" || i.runnerStatus === "pending" || i.runnerStatus === "installing")
    return "never_bootstrapped";
  if (i.runnerStatus === "idle" || i.runnerStatus === "online") return "never_picked_up_job";
  // Offline or unknown at GitHub with no job: a machine nobody can use.
  return "leak";
}

/** The watchdog's verdict on one instance at `now`: reap it (and why), or null to keep it. */
export function overstay(i: LifetimeFacts, policy: LifetimePolicy, now: number): Reap | null {
  const limit = limitFor(i.onJob, policy);
  const ageMs = now - i.createdAt;
  if (limit === null || ageMs < limit) return null;
  return { reason: overstayReason(i), ageMs, force: i.onJob };
}

/** When the watchdog will reap this instance if nothing changes (for the planner's wake), or null. */
export function overstayDeadline(i: Pick<LifetimeFacts, "createdAt" | "onJob">, policy: LifetimePolicy): number | null {
  const limit = limitFor(i.onJob, policy);
  return limit === null ? null : i.createdAt + limit;
}
