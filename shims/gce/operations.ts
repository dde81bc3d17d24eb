import { SHIM_INTERFACE_VERSION_FLAVORS } from "../../src/providers/shim-protocol.ts";
import { readCreateBody, utf8base64 } from "../common/shim-request.ts";
import { answer, gceErrorAnswer, type ShimAnswer } from "./errors.ts";
import { MACHINE_TYPE, parseExtraSpecs, RESOURCE_NAME } from "./extra-specs.ts";
import type { GceApi } from "./gce-api.ts";
import { findInstance, listPool, type PoolScope, toProviderInstance, zoneName } from "./instances.ts";
import { launch } from "./launch.ts";
import { describeAttempt, describeFailures } from "./launch-plan.ts";
import { shapedSpecs } from "./shape.ts";
import { metadataProblem, renderStartupScript, STARTUP_SCRIPT_KEY } from "./startup-script.ts";

/**
 * The protocol's operations over Compute Engine (docs/provider-shim-protocol.md, Routes), each
 * answering the way the coordinator reads it. The HTTP side (signatures, routing) is worker.ts.
 */

export interface Operations {
  gce: GceApi;
  scope: PoolScope;
  /** The scale set's extra specs from X-Edgerunner-Pool-Extra-Specs. */
  headerSpecs: unknown;
  /** The Worker's GCE_ZONES, used when extra_specs name none. */
  zones: string[];
  createDeadlineMs: number;
  now?: () => number;
}

/** An image family or image: a full or partial URL (projects/debian-cloud/global/images/family/debian-12, global/images/my-image). */
export const IMAGE =
  /^(?:https:\/\/(?:www|compute)\.googleapis\.com\/compute\/v1\/)?(?:projects\/[a-z0-9.:-]+\/)?global\/images\/(?:family\/)?[a-z](?:[-a-z0-9]{0,61}[a-z0-9])?$/;

/** Protocol v1.2: a flavor catalogue (`GET /v1/flavors`), so the coordinator may shape this shim's scale sets. */
export const capabilities = (project: string): ShimAnswer =>
  answer(200, {
    interface_version: SHIM_INTERFACE_VERSION_FLAVORS,
    async: false,
    flavors: true,
    idempotent_create: true,
    provider: "gce",
    project,
  });

export async function create(o: Operations, rawBody: string): Promise<ShimAnswer> {
  const read = readCreateBody(rawBody, o.scope.poolId);
  if (!read.ok) return answer(400, { error: read.error, ...(read.details && { details: read.details }) });
  const { instance: b, problems } = read;
  if (!IMAGE.test(b.image))
    problems.push(
      `image must be an image family or image URL such as projects/debian-cloud/global/images/family/debian-12, not ${JSON.stringify(b.image.slice(0, 64))}`,
    );
  if (b.os_type !== "linux") problems.push("os_type must be linux: the GCE shim boots Linux runners (set the scale set's os_type)");
  if (!MACHINE_TYPE.test(b.flavor))
    problems.push(`flavor must be a GCE machine type such as e2-standard-2, not ${JSON.stringify(b.flavor.slice(0, 64))}`);
  if (!RESOURCE_NAME.test(b.name))
    problems.push(
      `name ${JSON.stringify(b.name.slice(0, 80))} is not a GCE instance name (lowercase letters, digits and -, at most 63, starting with a letter)`,
    );
  const parsed = parseExtraSpecs(b.extra_specs ?? o.headerSpecs);
  if (!parsed.ok) problems.push(...parsed.problems);
  // A shaped scale set's machine: the job's disk and Spot over the pool's settings.
  const specs = !parsed.ok ? null : b.shape ? shapedSpecs(parsed.specs, b.shape) : { ok: true as const, specs: parsed.specs };
  if (specs && !specs.ok) problems.push(specs.problem);
  const zones = specs?.ok ? (specs.specs.zones ?? o.zones) : o.zones;
  if (specs?.ok && zones.length === 0) problems.push("no zone: set extra_specs.zones (or the Worker's GCE_ZONES)");
  if (problems.length || !specs?.ok) return answer(400, { error: `cannot create ${b.name}: ${problems.join("; ")}`, details: problems });
  const script = renderStartupScript(b);
  if (!script.ok) return answer(400, { error: `cannot create ${b.name}: ${script.problem}` });
  const tooBig = metadataProblem([{ key: STARTUP_SCRIPT_KEY, value: script.script }]);
  if (tooBig) return answer(400, { error: `cannot create ${b.name}: ${tooBig}` });

  const now = o.now ?? Date.now;
  const out = await launch(
    o.gce,
    {
      name: b.name,
      image: b.image,
      machineType: b.flavor,
      zones,
      specs: specs.specs,
      scope: o.scope,
      startupScript: script.script,
      deadline: now() + o.createDeadlineMs,
    },
    now,
  );
  switch (out.kind) {
    case "existing":
      return answer(200, toProviderInstance(out.instance, b.name));
    case "launched": {
      const instance = toProviderInstance(out.instance, b.name);
      // Shown on the instance: it runs, but not as first asked.
      if (out.failures.length)
        instance.provider_fault = utf8base64(`launched as ${describeAttempt(out.attempt)} after: ${describeFailures(out.failures)}`);
      return answer(201, instance);
    }
    case "no_capacity":
      return answer(
        503,
        {
          error: `no GCE capacity for ${b.name}: tried ${describeFailures(out.failures)}${out.untried ? ` (${out.untried} more not tried: out of time or attempts)` : ""}`,
        },
        { "retry-after": "30" },
      );
    case "taken":
      return answer(409, {
        error: `instance name ${b.name} is taken by ${zoneName(out.instance.zone)}/${out.instance.name}, which is not this pool's`,
      });
    case "failed":
      return gceErrorAnswer(out.error, `cannot create ${b.name}${out.failures.length ? ` (after ${describeFailures(out.failures)})` : ""}`);
  }
}

export async function get(o: Operations, id: string): Promise<ShimAnswer> {
  const f = await findInstance(o.gce, o.scope, id);
  if (!f.ok) return gceErrorAnswer(f.error);
  return f.value ? answer(200, toProviderInstance(f.value)) : answer(404, { error: `no instance ${id} in this pool` });
}

export async function list(o: Operations): Promise<ShimAnswer> {
  const f = await listPool(o.gce, o.scope);
  if (!f.ok) return gceErrorAnswer(f.error);
  return answer(
    200,
    f.value.map((i) => toProviderInstance(i)),
  );
}

type Verb = "delete" | "start" | "stop";

/**
 * Delete, start or stop one machine of the pool: found first, so nothing outside the pool is
 * touched. The operation is not waited for: GCE carries it out, and the coordinator's next
 * listing shows the result (a delete that vanished meanwhile is done already).
 */
export async function change(o: Operations, id: string, verb: Verb): Promise<ShimAnswer> {
  const f = await findInstance(o.gce, o.scope, id);
  if (!f.ok) return gceErrorAnswer(f.error);
  if (!f.value) return answer(404, { error: `no instance ${id} in this pool` });
  const path = `projects/${o.scope.project}/zones/${zoneName(f.value.zone)}/instances/${f.value.name}`;
  const r = await o.gce.call({
    method: `compute.instances.${verb}`,
    http: verb === "delete" ? "DELETE" : "POST",
    path: verb === "delete" ? path : `${path}/${verb}`,
  });
  if (!r.ok && verb === "delete" && r.error.status === 404) return answer(204);
  return r.ok ? answer(204) : gceErrorAnswer(r.error);
}

/** Deletes every machine of the pool (one call each: GCE has no bulk delete for unrelated instances). */
export async function removeAll(o: Operations): Promise<ShimAnswer> {
  const f = await listPool(o.gce, o.scope);
  if (!f.ok) return gceErrorAnswer(f.error);
  for (const i of f.value) {
    const r = await o.gce.call({
      method: "compute.instances.delete",
      http: "DELETE",
      path: `projects/${o.scope.project}/zones/${zoneName(i.zone)}/instances/${i.name}`,
    });
    if (!r.ok && r.error.status !== 404) return gceErrorAnswer(r.error);
  }
  return answer(204);
}
