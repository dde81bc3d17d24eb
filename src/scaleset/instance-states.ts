import type { InstanceStatus, RunnerStatus } from "../db/runner/schema";

/**
 * The one place that says how an instance may move. Every writer checks here first and
 * records the transition with its reason; a move that is not listed is a bug or a race.
 */
const STATUS_TRANSITIONS: Record<InstanceStatus, readonly InstanceStatus[]> = {
  pending_create: ["creating", "error", "pending_delete", "pending_force_delete"],
  creating: ["running", "stopped", "error", "pending_delete", "pending_force_delete"],
  running: ["stopped", "error", "unknown", "pending_delete", "pending_force_delete"],
  stopped: ["running", "error", "unknown", "pending_delete", "pending_force_delete"],
  unknown: ["running", "stopped", "error", "pending_delete", "pending_force_delete"],
  error: ["pending_delete", "pending_force_delete"],
  // pending_delete → running: a scale-down found the runner busy (GitHub refused to remove it).
  pending_delete: ["deleting", "pending_force_delete", "running"],
  pending_force_delete: ["deleting"],
  // deleting → pending_delete: the shim failed; try again after a backoff.
  deleting: ["deleted", "pending_delete", "pending_force_delete"],
  deleted: [],
};

export function canTransition(from: InstanceStatus, to: InstanceStatus): boolean {
  return STATUS_TRANSITIONS[from].includes(to);
}

/** Instances that exist or may exist in a cloud: everything not yet deleted counts toward max_runners. */
export const isLive = (s: InstanceStatus) => s !== "deleted";

export const DELETION_STATUSES: readonly InstanceStatus[] = ["pending_delete", "pending_force_delete", "deleting"];
export const isBeingDeleted = (s: InstanceStatus) => DELETION_STATUSES.includes(s);

/**
 * What a runner may report about itself. Bootstrap goes pending → installing → idle; a job
 * makes it active; ephemeral runners end terminated. `failed` is final for the bootstrap.
 */
const RUNNER_TRANSITIONS: Record<RunnerStatus, readonly RunnerStatus[]> = {
  pending: ["installing", "idle", "failed", "terminated", "offline", "unknown"],
  installing: ["installing", "idle", "failed", "terminated", "offline", "unknown"],
  idle: ["active", "terminated", "offline", "online", "unknown", "failed"],
  online: ["idle", "active", "terminated", "offline", "unknown", "failed"],
  active: ["idle", "terminated", "offline", "unknown", "failed"],
  offline: ["idle", "active", "online", "terminated", "unknown", "failed"],
  unknown: ["pending", "installing", "idle", "active", "online", "offline", "terminated", "failed"],
  failed: ["terminated"],
  terminated: [],
};

export function canRunnerTransition(from: RunnerStatus, to: RunnerStatus): boolean {
  return RUNNER_TRANSITIONS[from].includes(to);
}

export class TransitionError extends Error {
  constructor(
    readonly field: "status" | "runner_status",
    readonly from: string,
    readonly to: string,
  ) {
    super(`${field} cannot go from ${from} to ${to}`);
  }
}

export function assertTransition(from: InstanceStatus, to: InstanceStatus): void {
  if (!canTransition(from, to)) throw new TransitionError("status", from, to);
}
