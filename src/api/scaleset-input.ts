import { z } from "@hono/zod-openapi";
import { jitConfigTimings, osArches, osTypes, scaleSetIntakes } from "../db/scaleset/schema";
import { HttpsUrl, ResourceName } from "../http/openapi";
import { normalizeLabels } from "../intake/labels";
import { schedulesAboveMax } from "../scaleset/schedule/schedule-validation";
import { ShapeBoundsSchema } from "../shapes/shape-bounds";
import { Schedules } from "./min-idle-schedule";

// What a create and an update of a scale set accept: each field described once for validation,
// the TypeScript types and the OpenAPI document, and the cross-field rules (idle within max, the
// schedule within max, the hard cap covering the lifetime) that refine both. How a scale set is
// shown is scaleset-view.ts; the routes are in src/routes/scalesets.ts.

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
/** Shared with scaleset-view.ts, so the view describes `shape` in the words a create does. */
export const SHAPE_DESCRIPTION =
  // biome-ignore lint/suspicious/noTemplateCurlyInString: `${{ github.run_id }}` is the GitHub Actions expression a workflow writes, not a placeholder
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
