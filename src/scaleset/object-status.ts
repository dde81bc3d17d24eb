import { type BudgetStatus, budgetStatus } from "./github-pacing";
import type { ListenerStatus } from "./listener-host";
import type { LastReconcile, ObjectState } from "./object-state";
import type { ScaleSetSettings } from "./settings";

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
  github_budget: BudgetStatus | null;
}

/** The status from the object's own state, its armed alarm (`nextWake`) and its listener's status. */
export function objectStatus(
  state: ObjectState,
  settings: Pick<ScaleSetSettings, "createBackoff">,
  nextWake: number | null,
  listener: ListenerStatus | null,
): ScaleSetStatus {
  const b = state.createBackoff;
  const iso = (t: number | null) => (t === null ? null : new Date(t).toISOString());
  const ops = [...state.allOps().values()];
  return {
    scale_set_id: state.scaleSetId,
    next_wake_at: iso(nextWake),
    create_backoff: {
      failures: b.failures,
      last_failure_at: iso(b.lastFailureAt),
      hard_limited_at: iso(b.hardLimitedAt),
      create_allowed_at:
        b.hardLimitedAt !== null
          ? null
          : iso(b.failures && b.lastFailureAt ? b.lastFailureAt + b.failures * settings.createBackoff.intervalMs : null),
    },
    last_reconcile: state.lastReconcile,
    pending_operations: ops.filter((o) => o.opId).length,
    delete_retries: ops.filter((o) => o.retryAt !== null).length,
    listener,
    github_budget: budgetStatus(state.budgetWait),
  };
}
