import type { BudgetStatus } from "./github-pacing";
import type { InvocationsStatus } from "./invocation-record";
import type { ListenerStatus } from "./listener-host";
import type { LastReconcile } from "./object-state";

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
  /** What this object's invocations spent of Cloudflare's per-invocation budgets, since it last started. */
  invocations: InvocationsStatus;
}
