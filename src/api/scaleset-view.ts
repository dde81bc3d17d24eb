import { z } from "@hono/zod-openapi";
import type { ScaleSetWithOwners } from "../db/scaleset/scaleset-store";
import { jitConfigTimings, osArches, osTypes, scaleSetIntakes } from "../db/scaleset/schema";
import { entityFullName } from "../github/entity-names";
import { iso, Timestamp } from "../http/openapi";
import { ShapeBoundsSchema } from "../shapes/shape-bounds";
import { ScheduleEntrySchema } from "./min-idle-schedule";
import { SHAPE_DESCRIPTION } from "./scaleset-input";
import { ObjectStatusSchema } from "./scaleset-object-status";

/**
 * A scale set as the admin API shows it, wherever it is shown (a list, a create's or an update's
 * answer, and with its object's status in a show): the schemas and the view that fills them
 * from a stored scale set. What a create and an update accept is scaleset-input.ts.
 */

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
