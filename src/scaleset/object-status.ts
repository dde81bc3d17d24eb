import type { PollerStatus } from "../forges/forgejo/poller-host";
import type { InvocationsStatus } from "./executor/invocation-record";
import { type SpendGuardStatus, spendGuardStatus } from "./guards/spend-guard";
import { type BudgetStatus, budgetStatus } from "./jit/github-pacing";
import { type CreatePacingStatus, createPacingStatus } from "./jit/on-boot-pacing";
import type { ListenerStatus } from "./listener/listener-host";
import type { LastReconcile, ObjectState } from "./object-state";
import { type MinIdleScheduleStatus, minIdleScheduleStatus } from "./schedule/min-idle-keeping";

/** What a scale set's object reports of itself (GET /scalesets/{id} status, the dashboard). */
export interface ScaleSetStatus {
  scale_set_id: string | null;
  next_wake_at: string | null;
  create_backoff: { failures: number; last_failure_at: string | null; hard_limited_at: string | null; create_allowed_at: string | null };
  last_reconcile: LastReconcile | null;
  pending_operations: number;
  delete_retries: number;
  /** The runner scale set API listener (scaleset_api intake), if it ever ran. */
  listener: ListenerStatus | null;
  /** The Forgejo poller (poll intake), if it ever polled. */
  poller: PollerStatus | null;
  github_budget: BudgetStatus | null;
  create_pacing: CreatePacingStatus | null;
  /** The min idle the last pass planned with: a schedule entry's, or the scale set's own. */
  min_idle_schedule: MinIdleScheduleStatus | null;
  /** What this object's invocations spent of Cloudflare's per-invocation budgets, since it last started. */
  invocations: InvocationsStatus;
  /** The spend guard (max_machine_hours_per_day) as the last pass found it; null: no cap. */
  spend_guard: SpendGuardStatus | null;
}

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
