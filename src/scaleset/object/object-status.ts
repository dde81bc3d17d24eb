import { spendGuardStatus } from "../guards/spend-guard";
import { budgetStatus } from "../jit/github-pacing";
import { createPacingStatus } from "../jit/on-boot-pacing";
import { minIdleScheduleStatus } from "../schedule/min-idle-keeping";
import type { ObjectState } from "./object-state";
import type { InvocationsStatus, ListenerStatus, PollerStatus, ScaleSetStatus } from "./status-types";

/** The status from the object's state; the parts kept elsewhere are passed in. */
export function objectStatus(input: {
  state: ObjectState;
  nextWake: number | null;
  createBackoffIntervalMs: number;
  listener: ListenerStatus | null;
  poller: PollerStatus | null;
  invocations: InvocationsStatus;
}): ScaleSetStatus {
  const { state } = input;
  const b = state.createBackoff;
  const iso = (t: number | null) => (t === null ? null : new Date(t).toISOString());
  const ops = [...state.allOps().values()];
  return {
    scale_set_id: state.scaleSetId,
    next_wake_at: iso(input.nextWake),
    create_backoff: {
      failures: b.failures,
      last_failure_at: iso(b.lastFailureAt),
      hard_limited_at: iso(b.hardLimitedAt),
      create_allowed_at:
        b.hardLimitedAt !== null
          ? null
          : iso(b.failures && b.lastFailureAt ? b.lastFailureAt + b.failures * input.createBackoffIntervalMs : null),
    },
    last_reconcile: state.lastReconcile,
    pending_operations: ops.filter((o) => o.opId).length,
    delete_retries: ops.filter((o) => o.retryAt !== null).length,
    listener: input.listener,
    poller: input.poller,
    github_budget: budgetStatus(state.budgetWait),
    create_pacing: createPacingStatus(state.createPacing),
    min_idle_schedule: minIdleScheduleStatus(state.minIdleSchedule),
    invocations: input.invocations,
    spend_guard: spendGuardStatus(state.spendGuard),
  };
}
