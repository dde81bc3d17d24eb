import { z } from "@hono/zod-openapi";
import type { InstanceRow } from "../db/runner/instance-lookups";
import { instanceStatuses, runnerStatuses } from "../db/runner/schema";
import { iso, Timestamp } from "../http/openapi";
import { MachineShapeSchema } from "../shapes/machine-shape";

/**
 * An instance as the admin API shows it, wherever it is listed (/instances, a scale set's
 * instances): the schema and the view that fills it from a row.
 */

export const InstanceSchema = z
  .object({
    id: z.uuid(),
    name: z.string(),
    scale_set_id: z.uuid(),
    provider_id: z.string().nullable().openapi({ description: "The cloud's id for the machine" }),
    status: z.enum(instanceStatuses),
    runner_status: z.enum(runnerStatuses),
    agent_id: z.int().nullable().openapi({
      description: "GitHub's runner id: from GitHub's JIT answer, or confirmed at GitHub as the runner with this instance's name",
    }),
    reported_agent_id: z.int().nullable().openapi({
      description:
        "The runner id the machine reported (runners without JIT). A claim: never used to remove a runner before GitHub confirms it",
    }),
    addresses: z.array(z.object({ address: z.string(), type: z.enum(["public", "private"]) })),
    os_type: z.string().nullable(),
    os_name: z.string().nullable(),
    os_version: z.string().nullable(),
    os_arch: z.string().nullable(),
    create_attempt: z.int(),
    status_message: z.string().nullable(),
    provider_fault: z.string().nullable(),
    job_id: z.int().nullable(),
    flavor: z
      .string()
      .nullable()
      .openapi({ description: "A shaped scale set's machine: the flavor chosen for its job (else null: the scale set's)" }),
    shape: MachineShapeSchema.nullable().openapi({
      description: "A shaped scale set's machine: what its job asked for, and why this flavor",
    }),
    created_at: Timestamp,
    updated_at: Timestamp,
    status_changed_at: Timestamp,
  })
  .openapi("Instance");

export const instanceView = (r: InstanceRow): z.infer<typeof InstanceSchema> => ({
  id: r.id,
  name: r.name,
  scale_set_id: r.scaleSetId,
  provider_id: r.providerId,
  status: r.status,
  runner_status: r.runnerStatus,
  agent_id: r.agentId,
  reported_agent_id: r.reportedAgentId,
  addresses: r.addresses,
  os_type: r.osType,
  os_name: r.osName,
  os_version: r.osVersion,
  os_arch: r.osArch,
  create_attempt: r.createAttempt,
  status_message: r.statusMessage,
  provider_fault: r.providerFault,
  job_id: r.jobId,
  flavor: r.shape?.flavor ?? null,
  shape: r.shape ?? null,
  created_at: iso(r.createdAt)!,
  updated_at: iso(r.updatedAt)!,
  status_changed_at: iso(r.statusChangedAt)!,
});
