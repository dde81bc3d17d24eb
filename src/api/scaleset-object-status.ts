import { z } from "@hono/zod-openapi";
import { Timestamp } from "../http/openapi";

/**
 * What a scale set's Durable Object says of itself (its reconciles, listener or poller, budgets
 * and guards), as the admin API shows it: a scale set's `status` and the answer of its reconcile,
 * reset and spend-guard reset.
 */

const InvocationCostSchema = z.object({
  subrequests: z.int(),
  fetches: z.int(),
  d1_round_trips: z.int(),
  d1_queries: z.int(),
});

export const ObjectStatusSchema = z
  .object({
    scale_set_id: z.string().nullable(),
    next_wake_at: Timestamp.nullable(),
    create_backoff: z.object({
      failures: z.int(),
      last_failure_at: Timestamp.nullable(),
      hard_limited_at: Timestamp.nullable().openapi({ description: "Set when creation stopped after too many straight failures" }),
      create_allowed_at: Timestamp.nullable(),
    }),
    last_reconcile: z
      .object({
        at: z.number(),
        durationMs: z.number(),
        summary: z.record(z.string(), z.unknown()).nullable(),
        actions: z.record(z.string(), z.number()),
        error: z.string().nullable(),
        d1RoundTrips: z.number(),
        d1Queries: z.number().optional(),
        subrequests: z
          .number()
          .optional()
          .openapi({ description: "Outbound fetches and D1 calls the run made (Cloudflare allows 10,000 per invocation)" }),
        fetches: z.number().optional(),
        passes: z.number(),
      })
      .nullable(),
    pending_operations: z.int(),
    delete_retries: z.int(),
    listener: z
      .object({
        github_scale_set_id: z.int().nullable(),
        session_open: z.boolean(),
        last_message_id: z.int().openapi({ description: "The last queue message whose effects are stored and which was acknowledged" }),
        statistics: z
          .record(z.string(), z.number())
          .nullable()
          .openapi({ description: "GitHub's last statistics for the runner scale set (totalAssignedJobs, …)" }),
        failures: z.int(),
        retry_at: Timestamp.nullable(),
        last_error: z.string().nullable(),
        invalid_job_items: z.int().openapi({
          description:
            "Job items of the queue that failed validation: each recorded (a job row with its `problem`, when it had a runner request id) and logged (`listener_job_invalid`)",
        }),
        unreadable_messages: z.int().openapi({
          description: "Queue messages that could not be read (not JSON, malformed, too large) and were acknowledged unread after 3 polls",
        }),
        last_unreadable: z
          .object({ at: Timestamp, message_id: z.int(), error: z.string() })
          .nullable()
          .openapi({ description: "The last message acknowledged unread, and why" }),
      })
      .nullable()
      .openapi({ description: "The runner scale set API listener (intake scaleset_api); null if it never ran" }),
    poller: z
      .object({
        last_poll_at: Timestamp.nullable().openapi({ description: "When it last asked Forgejo for the scope's waiting jobs" }),
        next_poll_at: Timestamp.nullable().openapi({ description: "When it asks next; null: it does not poll now (disabled)" }),
        waiting_jobs_seen: z
          .int()
          .nullable()
          .openapi({ description: "Waiting jobs of the entity's scope at the last good poll (any labels); null before one" }),
        held_jobs: z.int().openapi({ description: "Jobs this scale set took: waiting for the runner made for them, or running on it" }),
        failures: z.int().openapi({ description: "Straight failed polls; it backs off 2 s doubling to 5 min" }),
        retry_at: Timestamp.nullable().openapi({ description: "No poll before this: the backoff, or Forgejo's throttling" }),
        last_error: z.string().nullable(),
        invalid_jobs: z.int().openapi({ description: "Listed jobs that failed validation (skipped), over the poller's life" }),
      })
      .nullable()
      .openapi({
        description:
          "The Forgejo poller (intake poll): Forgejo sends no workflow_job webhooks, so the object polls; null if it never polled",
      }),
    github_budget: z
      .object({
        blocked: z.boolean().openapi({ description: "The last pass that wanted runners got fewer JIT configs than it wanted" }),
        frees_at: Timestamp.nullable().openapi({ description: "When the budget window that fell short ends" }),
        wanted: z.int(),
        granted: z.int(),
      })
      .nullable()
      .openapi({ description: "The credential's GitHub budget (GITHUB_POINTS_PER_MINUTE); null until it first held back a create" }),
    create_pacing: z
      .object({
        holding_back: z
          .boolean()
          .openapi({ description: "The last pass that wanted runners created only some: the rest wait for the budget" }),
        wanted: z.int(),
        allowed: z.int(),
        next_create_at: Timestamp.nullable().openapi({ description: "When the next held-back create may go" }),
        unminted: z.int().openapi({ description: "Machines created whose runner's JIT config is not minted yet" }),
        line_clears_at: Timestamp.nullable().openapi({
          description: "When the last of them should have its JIT config, at the pool's rate",
        }),
        boot_time_ms: z.int().openapi({ description: "The boot time creates are led by (create to the machine's first ask)" }),
        boot_time_source: z.enum(["setting", "observed", "default"]).openapi({
          description: "setting: boot_time_seconds; observed: p90 of recent machines' boots; default: 30 s until a few machines booted",
        }),
        boot_samples: z.int(),
        jit_per_minute: z.number().openapi({ description: "JIT configs a minute the credential pool's usable credentials mint" }),
        credentials_usable: z.int(),
        credentials: z.int(),
        at: Timestamp,
      })
      .nullable()
      .openapi({
        description:
          "On-boot creates paced to the GitHub budget: machines are created when their JIT config can be minted about when they boot (docs/performance.md); null until an on-boot scale set wanted runners",
      }),
    spend_guard: z
      .object({
        cap_machine_hours: z.number(),
        used_machine_hours: z.number().openapi({ description: "Machine-hours of the scale set's instances in the current UTC day" }),
        holding: z.boolean().openapi({ description: "The cap is reached: the scale set creates nothing until 00:00 UTC or a reset" }),
        lifted_by_reset: z.boolean().openapi({ description: "The cap is reached, but a reset today lifted the guard until 00:00 UTC" }),
        resumes_at: Timestamp.openapi({ description: "00:00 UTC of the next day, when the guard lets go by itself" }),
        reset_at: Timestamp.nullable(),
        at: Timestamp.openapi({ description: "The pass that found these figures" }),
        message: z
          .string()
          .openapi({ example: "spend guard: 12.3 of 12 machine-hours today; creating resumes at 00:00 UTC or after a reset" }),
      })
      .nullable()
      .openapi({ description: "The spend guard (max_machine_hours_per_day) as the last reconcile found it; null without a cap" }),
    min_idle_schedule: z
      .object({
        min_idle: z.int().openapi({ description: "The min idle the last pass planned with" }),
        entry: z
          .string()
          .nullable()
          .openapi({ description: "The schedule entry it comes from; null: the scale set's own min_idle_runners" }),
        since: Timestamp.nullable().openapi({
          description: "When that entry took effect (ahead of its cron time by prewarm_lead_ms for a prewarm entry)",
        }),
        until: Timestamp.nullable().openapi({
          description:
            "When the next entry takes effect and min idle may change (the object's alarm wakes then); null: no entry matches within a year",
        }),
        prewarm_lead_ms: z.int().openapi({ description: "How far ahead prewarm entries take effect: the scale set's boot time" }),
      })
      .nullable()
      .openapi({
        description:
          "Min idle now, and why: a schedule entry's or the scale set's own (docs/scale-sets.md#schedules); null until the object reconciled",
      }),
    invocations: z
      .object({
        count: z.int(),
        largest: InvocationCostSchema.nullable().openapi({ description: "The most one invocation spent, field by field" }),
        last: InvocationCostSchema.extend({ method: z.string() }).nullable(),
        budget: z.object({ subrequests: z.int(), d1_queries: z.int() }),
      })
      .openapi({
        description: "What the object's invocations (alarm, each RPC) spent of Cloudflare's per-invocation budgets since it last started",
      }),
  })
  .openapi("ScaleSetObjectStatus");
