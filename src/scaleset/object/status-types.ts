import type { ScaleSetStatistics } from "../listener/actions-port";
import type { PlanSummary } from "../reconcile";

/**
 * The shape of a scale set object's status, part of its RPC surface (rpc.ts), which env.ts types
 * the binding with. Its parts are declared here rather than beside the code that builds them
 * (the listener and poller hosts, the JIT pacing, the object state, …), which reaches Env: so the
 * binding's type reaches none of that code, and no import circle runs through env.ts.
 */

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

/** What the last reconcile run did, as the object keeps it (object-state.ts) and reports it. */
export interface LastReconcile {
  at: number;
  durationMs: number;
  summary: PlanSummary | null;
  actions: Record<string, number>;
  error: string | null;
  /** D1 round trips the pass took: constant whatever the number of instances. */
  d1RoundTrips: number;
  /** The D1 queries (statements) those round trips carried: Cloudflare allows 1,000 per invocation. Absent in runs recorded before it was counted. */
  d1Queries?: number;
  /**
   * Subrequests the run made, Cloudflare's 10,000 per invocation: every outbound fetch (GitHub,
   * the Actions service, the shim) and every D1 call, whoever made it (lib/invocation-cost.ts),
   * so it can exceed `d1RoundTrips`, which counts the pass's own planned trips only.
   */
  subrequests?: number;
  /** Of those, outbound fetches. */
  fetches?: number;
  /** Passes in the run: a pass that changed something is followed by another, at most four. */
  passes: number;
}

/** What the status shows of the scale set API listener (listener/listener-host.ts). */
export interface ListenerStatus {
  github_scale_set_id: number | null;
  session_open: boolean;
  last_message_id: number;
  statistics: ScaleSetStatistics | null;
  failures: number;
  retry_at: string | null;
  last_error: string | null;
  /** Job items that failed validation, each recorded (a job row with its `problem`) and logged. */
  invalid_job_items: number;
  /** Messages acknowledged unread, and the last of them. */
  unreadable_messages: number;
  last_unreadable: { at: string; message_id: number; error: string } | null;
}

/** What the scale set status shows of the poller (GET /scalesets/{id} `poller`, `scaleset show`, the dashboard). */
export interface PollerStatus {
  last_poll_at: string | null;
  /** When the object's poll timer fires next; null: the scale set does not poll now (disabled). */
  next_poll_at: string | null;
  /** Waiting jobs the scope listed at the last good poll; null before one. */
  waiting_jobs_seen: number | null;
  /** Jobs this scale set holds: waiting for their runner, or taken by it. */
  held_jobs: number;
  failures: number;
  retry_at: string | null;
  last_error: string | null;
  invalid_jobs: number;
}

/** The object status's view of the budget: null until it first cut a plan. */
export interface BudgetStatus {
  /** Whether the last pass that wanted runners got fewer than it wanted. */
  blocked: boolean;
  /** When the window that fell short ends (null: not blocked). */
  frees_at: string | null;
  wanted: number;
  granted: number;
}

/** The object status's view of the pacing: null until an on-boot pass wanted runners. */
export interface CreatePacingStatus {
  /** Whether the last pass that wanted runners held some back. */
  holding_back: boolean;
  wanted: number;
  allowed: number;
  next_create_at: string | null;
  /** Machines created whose runners are not minted yet, and when the last of them should be. */
  unminted: number;
  line_clears_at: string | null;
  boot_time_ms: number;
  boot_time_source: "setting" | "observed" | "default";
  boot_samples: number;
  jit_per_minute: number;
  credentials_usable: number;
  credentials: number;
  at: string;
}

/** The status's view: "min idle now N because of schedule X until T"; null until a pass evaluated it. */
export interface MinIdleScheduleStatus {
  min_idle: number;
  /** The schedule entry's name; null: the scale set's own min_idle_runners. */
  entry: string | null;
  since: string | null;
  until: string | null;
  prewarm_lead_ms: number;
}

/** One invocation's cost as the status shows it (executor/invocation-record.ts). */
export interface InvocationCostView {
  subrequests: number;
  fetches: number;
  d1_round_trips: number;
  d1_queries: number;
}

/** What the object's invocations spent of Cloudflare's per-invocation budgets (executor/invocation-record.ts). */
export interface InvocationsStatus {
  /** Invocations since this object's incarnation started. */
  count: number;
  /** The most each budget was drawn on by one invocation (field by field). */
  largest: InvocationCostView | null;
  last: (InvocationCostView & { method: string }) | null;
  budget: { subrequests: number; d1_queries: number };
}

/** The guard as a scale set's status shows it (GET /scalesets/{id}), from what the last pass kept. */
export interface SpendGuardStatus {
  cap_machine_hours: number;
  used_machine_hours: number;
  holding: boolean;
  lifted_by_reset: boolean;
  resumes_at: string;
  reset_at: string | null;
  at: string;
  message: string;
}
