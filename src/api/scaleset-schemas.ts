// Over the house's ~400 lines (~500) on purpose: a scale set's API shape is one zod definition
// (create, update, view and the object's status, each field described once for validation, the
// TypeScript types and the OpenAPI document), and its cross-field rules (idle within max, the
// schedule within max, the hard cap covering the lifetime) refine those same objects.
import { z } from "@hono/zod-openapi";
import type { ScaleSetWithOwners } from "../db/scaleset/scaleset-store";
import { jitConfigTimings, osArches, osTypes, scaleSetIntakes } from "../db/scaleset/schema";
import { entityFullName } from "../github/entity-names";
import { HttpsUrl, iso, ResourceName, Timestamp } from "../http/openapi";
import { normalizeLabels } from "../intake/labels";
import { MAX_SCHEDULE_ENTRIES, scheduleProblems, schedulesAboveMax } from "../scaleset/schedule/schedule-validation";
import { ShapeBoundsSchema } from "../shapes/shape-bounds";

// The admin API's shapes of a scale set: what a create and an update accept, what a scale set
// and its object's status look like, and the view of a stored scale set. The routes are in
// src/routes/scalesets.ts.

const Label = z.string().trim().min(1).max(256);
const Labels = z
  .array(Label)
  .min(1)
  .max(100)
  .transform(normalizeLabels)
  .openapi({ description: "Runner labels; stored lower-cased, de-duplicated and sorted", example: ["self-hosted", "linux", "x64"] });
const ExtraSpecs = z
  .record(z.string(), z.unknown())
  .refine((v) => JSON.stringify(v).length <= 16 * 1024, "must serialize to at most 16 KiB")
  .openapi({ description: "Provider-specific JSON object, passed to the shim as-is" });

/** 30 days: six times the longest a job may run on a self-hosted runner (5 days). */
const MAX_LIFETIME_SECONDS = 30 * 86_400;
/** 10,000 runners (max_runners' own bound) around the clock. */
const MAX_MACHINE_HOURS_PER_DAY = 10_000 * 24;
// Min idle on a schedule (docs/scale-sets.md#schedules; scaleset/schedule has the rules).
const ScheduleEntryFields = {
  name: z
    .string()
    .regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/, "1-64 letters, digits, '_', '.' and '-', starting with a letter or digit")
    .openapi({ description: "What the status and the logs call this entry", example: "workday" }),
  cron: z.string().min(1).max(200).openapi({
    description:
      "When the entry takes effect: minute hour day-of-month month day-of-week (lists, ranges, steps, `*`, JAN–DEC, SUN–SAT), in `timezone`",
    example: "0 8 * * 1-5",
  }),
  timezone: z
    .string()
    .min(1)
    .max(64)
    .openapi({ description: "An IANA time zone; daylight saving time is followed", example: "Europe/Berlin" }),
  min_idle_runners: z.int().min(0).max(10_000).openapi({ description: "Idle runners to keep from then on (at most max_runners)" }),
};
const PREWARM_DESCRIPTION =
  "Take effect one boot time early (boot_time_seconds, else the p90 of recent boots, else 30 s), so the runners are idle when the time comes";
const ScheduleEntryInput = z.strictObject({
  ...ScheduleEntryFields,
  prewarm: z.boolean().default(false).openapi({ description: PREWARM_DESCRIPTION }),
});
export const ScheduleEntrySchema = z
  .object({ ...ScheduleEntryFields, prewarm: z.boolean().openapi({ description: PREWARM_DESCRIPTION }) })
  .openapi("MinIdleScheduleEntry");
const Schedules = z
  .array(ScheduleEntryInput)
  .max(MAX_SCHEDULE_ENTRIES, `at most ${MAX_SCHEDULE_ENTRIES} entries`)
  .superRefine((entries, ctx) => {
    for (const p of scheduleProblems(entries)) ctx.addIssue({ code: "custom", path: p.path, message: p.message });
  })
  .openapi({
    description:
      "Min idle on a schedule: from each time an entry's cron matches, its min_idle_runners holds until another entry's matches (the latest wins; min_idle_runners while none has matched within a year). On update the list replaces the old one; [] removes it",
  });

const fields = {
  provider_name: ResourceName,
  labels: Labels,
  min_idle_runners: z.int().min(0).max(10_000),
  max_runners: z.int().min(1).max(10_000),
  image: z.string().min(1).max(512),
  flavor: z.string().min(1).max(512),
  os_type: z.enum(osTypes),
  os_arch: z.enum(osArches),
  bootstrap_timeout: z
    .int()
    .min(1)
    .max(24 * 60)
    .openapi({ description: "Minutes a new runner may take to become idle" }),
  runner_prefix: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9-]{0,31}$/, "1-32 letters, digits and '-', starting with a letter or digit"),
  runner_group: z.string().max(256),
  extra_specs: ExtraSpecs,
  enabled: z.boolean(),
  priority: z.int().min(0).max(1000).openapi({ description: "Higher wins when several scale sets match a job" }),
  jit_config_enabled: z.boolean().openapi({
    description:
      "Register runners with a just-in-time config (needs GHES >= 3.10). false: each machine fetches a one-time registration token and runs config.sh. Defaults to true on a GitHub endpoint and false on a Gitea one, which has no JIT configs (true is refused there)",
  }),
  intake: z.enum(scaleSetIntakes).openapi({
    description:
      "Where jobs come from. webhook: workflow_job deliveries matched by labels. scaleset_api: GitHub's runner scale set API (jobs use `runs-on: <scale set name>`; the coordinator long-polls GitHub, no webhook needed; needs jit_config_enabled). poll: the scale set polls Forgejo for waiting jobs (Forgejo endpoints only, and their default; docs/forges.md). Default: webhook, or poll on a Forgejo endpoint",
  }),
  jit_config_timing: z.enum(jitConfigTimings).openapi({
    description:
      "When a runner's JIT config is generated at GitHub. on_boot (default for webhook intake): when its machine first fetches its credentials, so creates wait for no GitHub call and the machine waits in line for the GitHub budget instead. before_create (always for scaleset_api intake): by the scale set before the machine is created. Ignored without jit_config_enabled",
  }),
  schedules: Schedules,
  boot_time_seconds: z.int().min(1).max(3600).nullable().openapi({
    description:
      "Seconds from a create to the machine first asking for its runner. On-boot creates are paced so that a burst's machines are minted their JIT configs about when they boot. null (default): learned from the scale set's machines (p90 of recent boots; 30 s until a few have booted)",
  }),
  max_runner_lifetime_seconds: z
    .int()
    .min(0, "must be 0 (never) or more seconds")
    .max(MAX_LIFETIME_SECONDS, `at most ${MAX_LIFETIME_SECONDS} seconds (30 days)`)
    .openapi({
      description:
        "The lifetime watchdog: a machine older than this (since its create) is deleted unless its runner is on a job: stuck after its job, a runner that never picked one up, never bootstrapped, or leaked. 0: never. Default 86400 (24 h)",
    }),
  runner_lifetime_hard_cap_seconds: z
    .int()
    .min(1, "must be at least 1 second, or null for no hard cap")
    .max(MAX_LIFETIME_SECONDS, `at most ${MAX_LIFETIME_SECONDS} seconds (30 days)`)
    .nullable()
    .openapi({
      description:
        "A lifetime that applies even to a runner on its job (its machine is force-deleted and the job fails). At least max_runner_lifetime_seconds. null (default): none",
    }),
  max_machine_hours_per_day: z
    .number()
    .positive("must be more than 0, or null for no cap")
    .max(MAX_MACHINE_HOURS_PER_DAY, `at most ${MAX_MACHINE_HOURS_PER_DAY}`)
    .nullable()
    .openapi({
      description:
        "The spend guard: machine-hours of the scale set's instances a UTC day after which it creates nothing more until 00:00 UTC or POST /scalesets/{id}/spend-guard/reset. null (default): no cap",
    }),
  runner_download_url: HttpsUrl.nullable().openapi({
    description:
      "Gitea and Forgejo scale sets: the runner binary machines download (act_runner, forgejo-runner), as neither forge publishes a runner-download API. null (default): the release docs/forges.md names. Ignored on GitHub, whose runner downloads come from its API",
  }),
  runner_download_sha256: z
    .string()
    .regex(/^[0-9a-fA-F]{64}$/, "the SHA-256 of the binary, 64 hex digits")
    .nullable()
    .openapi({
      description:
        "The runner binary's SHA-256, checked before it runs. null (default): checked against the .sha256 file published beside the download",
    }),
};

const idleWithinMax = (v: { min_idle_runners?: number | undefined; max_runners?: number | undefined }) =>
  v.min_idle_runners === undefined || v.max_runners === undefined || v.min_idle_runners <= v.max_runners;
const idleWithinMaxIssue = { message: "min_idle_runners cannot exceed max_runners", path: ["min_idle_runners"] };
// Runners of a runner scale set come from its own generatejitconfig: there is no registration-token path.
const apiIntakeUsesJit = (v: { intake?: string | undefined; jit_config_enabled?: boolean | undefined }) =>
  !(v.intake === "scaleset_api" && v.jit_config_enabled === false);
const apiIntakeUsesJitIssue = { message: "intake scaleset_api needs jit_config_enabled", path: ["jit_config_enabled"] };
// The scale set API's JIT comes from its own endpoint, called by the scale set's object.
const apiIntakeMintsBeforeCreate = (v: { intake?: string | undefined; jit_config_timing?: string | undefined }) =>
  !(v.intake === "scaleset_api" && v.jit_config_timing === "on_boot");
const apiIntakeMintsBeforeCreateIssue = { message: "intake scaleset_api mints JIT configs before_create", path: ["jit_config_timing"] };

/** A hard cap below the lifetime would make the lifetime meaningless: refused, with both figures. */
export function hardCapIssue(lifetimeSeconds: number, hardCapSeconds: number | null): string | null {
  if (hardCapSeconds === null || lifetimeSeconds === 0 || hardCapSeconds >= lifetimeSeconds) return null;
  return `runner_lifetime_hard_cap_seconds (${hardCapSeconds}) must be at least max_runner_lifetime_seconds (${lifetimeSeconds}): raise it, lower the lifetime, or set it to null for no hard cap`;
}
const hardCapCoversLifetime = (
  v: { max_runner_lifetime_seconds?: number | undefined; runner_lifetime_hard_cap_seconds?: number | null | undefined },
  ctx: z.RefinementCtx,
) => {
  if (v.max_runner_lifetime_seconds === undefined || v.runner_lifetime_hard_cap_seconds === undefined) return;
  const message = hardCapIssue(v.max_runner_lifetime_seconds, v.runner_lifetime_hard_cap_seconds);
  if (message) ctx.addIssue({ code: "custom", message, path: ["runner_lifetime_hard_cap_seconds"] });
};
// A schedule entry may not ask for more idle runners than the scale set may have.
const schedulesWithinMax = (
  v: { schedules?: { name: string; min_idle_runners: number }[] | undefined; max_runners?: number | undefined },
  ctx: z.RefinementCtx,
) => {
  if (v.schedules === undefined || v.max_runners === undefined) return;
  for (const p of schedulesAboveMax(v.schedules, v.max_runners))
    ctx.addIssue({ code: "custom", path: ["schedules", ...p.path], message: p.message });
};

/** The timing a scale set gets when none is given: on_boot, but before_create for the scale set API. */
export const defaultJitConfigTiming = (intake: string) => (intake === "scaleset_api" ? "before_create" : "on_boot");

/** What the flavor column says of a shaped scale set: each machine's is chosen for its job. */
export const SHAPED_FLAVOR = "per-job";
const SHAPE_DESCRIPTION =
  "Shaped scale set: each job says its machine in a `<key>=${{ github.run_id }}/cpu=4/ram=16/…` label and gets a machine of its own, within these bounds (docs/scale-sets.md#shaped-scale-sets). Needs a provider with a flavor catalogue (protocol v1.2); image and flavor are then chosen per job";

export const CreateScaleSet = z
  .strictObject({
    name: ResourceName,
    provider_name: fields.provider_name,
    labels: fields.labels,
    min_idle_runners: fields.min_idle_runners.default(0),
    max_runners: fields.max_runners,
    // Required unless `shape` is given (then chosen per job): checked by the refine below.
    image: fields.image.optional(),
    flavor: fields.flavor.optional(),
    shape: ShapeBoundsSchema.nullable().default(null).openapi({ description: SHAPE_DESCRIPTION }),
    os_type: fields.os_type.default("linux"),
    os_arch: fields.os_arch.default("amd64"),
    bootstrap_timeout: fields.bootstrap_timeout.default(20),
    runner_prefix: fields.runner_prefix.default("edgerunner"),
    runner_group: fields.runner_group.default(""),
    extra_specs: fields.extra_specs.default({}),
    enabled: fields.enabled.default(true),
    priority: fields.priority.default(0),
    // Both default by the endpoint's forge (no JIT on Gitea; poll on Forgejo): decided by the route.
    jit_config_enabled: fields.jit_config_enabled.optional(),
    intake: fields.intake.optional(),
    jit_config_timing: fields.jit_config_timing.optional(),
    boot_time_seconds: fields.boot_time_seconds.default(null),
    max_runner_lifetime_seconds: fields.max_runner_lifetime_seconds.default(86_400),
    runner_lifetime_hard_cap_seconds: fields.runner_lifetime_hard_cap_seconds.default(null),
    max_machine_hours_per_day: fields.max_machine_hours_per_day.default(null),
    schedules: fields.schedules.default([]),
    runner_download_url: fields.runner_download_url.default(null),
    runner_download_sha256: fields.runner_download_sha256.default(null),
  })
  .refine(idleWithinMax, idleWithinMaxIssue)
  .superRefine(schedulesWithinMax)
  .refine(apiIntakeUsesJit, apiIntakeUsesJitIssue)
  .refine(apiIntakeMintsBeforeCreate, apiIntakeMintsBeforeCreateIssue)
  .superRefine(hardCapCoversLifetime)
  .superRefine((b, ctx) => {
    if (b.shape) return;
    for (const key of ["image", "flavor"] as const)
      if (b[key] === undefined) ctx.addIssue({ code: "custom", path: [key], message: "required (unless `shape` is given)" });
  })
  .openapi("CreateScaleSet");

export const UpdateScaleSet = z
  .strictObject({
    name: ResourceName.optional(),
    shape: ShapeBoundsSchema.optional().openapi({
      description: "A shaped scale set's new bounds (a scale set cannot become shaped or stop being so)",
    }),
    ...Object.fromEntries(Object.entries(fields).map(([k, v]) => [k, v.optional()])),
  } as { name: z.ZodOptional<typeof ResourceName>; shape: z.ZodOptional<typeof ShapeBoundsSchema> } & {
    [K in keyof typeof fields]: z.ZodOptional<(typeof fields)[K]>;
  })
  .refine(idleWithinMax, idleWithinMaxIssue)
  .superRefine(schedulesWithinMax)
  .refine(apiIntakeUsesJit, apiIntakeUsesJitIssue)
  .refine(apiIntakeMintsBeforeCreate, apiIntakeMintsBeforeCreateIssue)
  .superRefine(hardCapCoversLifetime)
  .openapi("UpdateScaleSet");

export const ScaleSetSchema = z
  .object({
    id: z.uuid(),
    name: z.string(),
    entity: z.object({ kind: z.enum(["repository", "organization", "enterprise"]), id: z.uuid(), name: z.string() }),
    endpoint: z.string(),
    provider_name: z.string(),
    labels: z.array(z.string()),
    min_idle_runners: z.int(),
    max_runners: z.int(),
    image: z.string(),
    flavor: z.string(),
    shape: ShapeBoundsSchema.nullable().openapi({ description: SHAPE_DESCRIPTION }),
    os_type: z.enum(osTypes),
    os_arch: z.enum(osArches),
    bootstrap_timeout: z.int(),
    runner_prefix: z.string(),
    runner_group: z.string(),
    extra_specs: z.record(z.string(), z.unknown()),
    enabled: z.boolean(),
    priority: z.int(),
    jit_config_enabled: z.boolean(),
    intake: z.enum(scaleSetIntakes),
    jit_config_timing: z.enum(jitConfigTimings),
    boot_time_seconds: z.int().nullable(),
    max_runner_lifetime_seconds: z.int(),
    runner_lifetime_hard_cap_seconds: z.int().nullable(),
    max_machine_hours_per_day: z.number().nullable(),
    runner_download_url: z.string().nullable(),
    runner_download_sha256: z.string().nullable(),
    spend_reset_at: Timestamp.nullable().openapi({
      description:
        "When an admin last lifted the spend guard (POST /scalesets/{id}/spend-guard/reset): lifted for the rest of that UTC day",
    }),
    schedules: z.array(ScheduleEntrySchema),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .openapi("ScaleSet");

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

export const ScaleSetDetailSchema = ScaleSetSchema.extend({
  status: ObjectStatusSchema,
  jit_waiting_instances: z.int().openapi({
    description:
      "Machines whose on-boot JIT config is being minted (jit_config_timing on_boot): waiting in line for the credentials' GitHub budget, or at GitHub",
  }),
}).openapi("ScaleSetDetail");

export const scaleSetView = ({ scaleSet: s, entity: e, providerName }: ScaleSetWithOwners): z.infer<typeof ScaleSetSchema> => ({
  id: s.id,
  name: s.name,
  entity: { kind: e.kind, id: e.id, name: entityFullName(e) },
  endpoint: e.endpointName,
  provider_name: providerName,
  labels: s.labels,
  min_idle_runners: s.minIdleRunners,
  max_runners: s.maxRunners,
  image: s.image,
  flavor: s.flavor,
  shape: s.shape ?? null,
  os_type: s.osType,
  os_arch: s.osArch,
  bootstrap_timeout: s.bootstrapTimeout,
  runner_prefix: s.runnerPrefix,
  runner_group: s.runnerGroup,
  extra_specs: s.extraSpecs,
  enabled: s.enabled,
  priority: s.priority,
  jit_config_enabled: s.jitConfigEnabled,
  intake: s.intake,
  jit_config_timing: s.jitConfigTiming,
  boot_time_seconds: s.bootTimeSeconds,
  max_runner_lifetime_seconds: s.maxRunnerLifetimeSeconds,
  runner_lifetime_hard_cap_seconds: s.runnerLifetimeHardCapSeconds,
  max_machine_hours_per_day: s.maxMachineHoursPerDay,
  runner_download_url: s.runnerDownloadUrl ?? null,
  runner_download_sha256: s.runnerDownloadSha256 ?? null,
  spend_reset_at: iso(s.spendResetAt),
  schedules: s.schedules,
  created_at: iso(s.createdAt)!,
  updated_at: iso(s.updatedAt)!,
});
