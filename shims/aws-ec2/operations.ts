import { SHIM_INTERFACE_VERSION_FLAVORS } from "../../src/providers/shim-protocol.ts";
import { readCreateBody, utf8base64 } from "../common/shim-request.ts";
import type { Ec2Api } from "./ec2-api.ts";
import { instanceIdsParams } from "./ec2-params.ts";
import { answer, ec2ErrorAnswer, type ShimAnswer } from "./errors.ts";
import { INSTANCE_TYPE, parseExtraSpecs } from "./extra-specs.ts";
import { findInstance, listPool, type PoolScope, toProviderInstance } from "./instances.ts";
import { launch } from "./launch.ts";
import { describeAttempt, describeFailures } from "./launch-plan.ts";
import { shapedSpecs } from "./shape.ts";
import { base64, renderUserData } from "./user-data.ts";

/**
 * The protocol's operations over EC2 (docs/provider-shim-protocol.md, Routes), each answering
 * the way the coordinator reads it. The HTTP side (signatures, routing) is worker.ts.
 */

export interface Operations {
  ec2: Ec2Api;
  scope: PoolScope;
  /** The scale set's extra specs from X-Edgerunner-Pool-Extra-Specs. */
  headerSpecs: unknown;
  region: string;
  createDeadlineMs: number;
  now?: () => number;
}

/** Protocol v1.2: a flavor catalogue (`GET /v1/flavors`), so the coordinator may shape this shim's scale sets. */
export const capabilities = (region: string): ShimAnswer =>
  answer(200, {
    interface_version: SHIM_INTERFACE_VERSION_FLAVORS,
    async: false,
    flavors: true,
    idempotent_create: true,
    provider: "aws-ec2",
    region,
  });

export async function create(o: Operations, rawBody: string): Promise<ShimAnswer> {
  const read = readCreateBody(rawBody, o.scope.poolId);
  if (!read.ok) return answer(400, { error: read.error, ...(read.details && { details: read.details }) });
  const { instance: b, problems } = read;
  if (!/^ami-(?:[0-9a-f]{8}|[0-9a-f]{17})$/.test(b.image))
    problems.push(`image must be an AMI id such as ami-0123456789abcdef0, not ${JSON.stringify(b.image.slice(0, 64))}`);
  if (b.os_type === "unknown") problems.push("os_type must be linux or windows (set the scale set's os_type)");
  if (b.flavor !== "" && !INSTANCE_TYPE.test(b.flavor))
    problems.push(`flavor must be an EC2 instance type such as c6i.large, not ${JSON.stringify(b.flavor.slice(0, 64))}`);
  if (b.name.length > 255) problems.push("name is longer than EC2's 255-character tag values");
  const parsed = parseExtraSpecs(b.extra_specs ?? o.headerSpecs);
  if (!parsed.ok) problems.push(...parsed.problems);
  // A shaped scale set's machine: the job's disk and spot over the pool's settings.
  const specs = !parsed.ok ? null : b.shape ? shapedSpecs(parsed.specs, b.shape, b.flavor) : { ok: true as const, specs: parsed.specs };
  if (specs && !specs.ok) problems.push(specs.problem);
  else if (specs && b.flavor === "" && !specs.specs.instance_types)
    problems.push("no instance type: set the scale set's flavor (or extra_specs.instance_types)");
  if (problems.length || !specs?.ok) return answer(400, { error: `cannot create ${b.name}: ${problems.join("; ")}`, details: problems });
  const userData = await renderUserData(b);
  if (!userData.ok) return answer(400, { error: `cannot create ${b.name}: ${userData.problem}` });

  const now = o.now ?? Date.now;
  const out = await launch(
    o.ec2,
    {
      name: b.name,
      imageId: b.image,
      flavor: b.flavor,
      specs: specs.specs,
      scope: o.scope,
      userData: base64(userData.bytes),
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
          error: `no EC2 capacity for ${b.name}: tried ${describeFailures(out.failures)}${out.untried ? ` (${out.untried} more not tried: out of time or attempts)` : ""}`,
        },
        { "retry-after": "30" },
      );
    case "taken":
      return answer(409, { error: `instance name ${b.name} is taken by ${out.instance.instanceId}, which is not this pool's` });
    case "failed":
      return ec2ErrorAnswer(
        out.action,
        out.error,
        `cannot create ${b.name}${out.failures.length ? ` (after ${describeFailures(out.failures)})` : ""}`,
      );
  }
}

export async function get(o: Operations, id: string): Promise<ShimAnswer> {
  const f = await findInstance(o.ec2, o.scope, id);
  if (!f.ok) return ec2ErrorAnswer("DescribeInstances", f.error);
  return f.value ? answer(200, toProviderInstance(f.value)) : answer(404, { error: `no instance ${id} in this pool` });
}

export async function list(o: Operations): Promise<ShimAnswer> {
  const f = await listPool(o.ec2, o.scope);
  if (!f.ok) return ec2ErrorAnswer("DescribeInstances", f.error);
  return answer(
    200,
    f.value.map((i) => toProviderInstance(i)),
  );
}

/** The EC2 action of each protocol route on one machine. */
const STATE_ACTIONS = { delete: "TerminateInstances", start: "StartInstances", stop: "StopInstances" } as const;

/** Terminate, start or stop one machine of the pool: found first, so nothing outside the pool is touched. */
export async function change(o: Operations, id: string, op: keyof typeof STATE_ACTIONS): Promise<ShimAnswer> {
  const action = STATE_ACTIONS[op];
  const f = await findInstance(o.ec2, o.scope, id);
  if (!f.ok) return ec2ErrorAnswer("DescribeInstances", f.error);
  if (!f.value) return answer(404, { error: `no instance ${id} in this pool` });
  const r = await o.ec2.call(action, instanceIdsParams([f.value.instanceId]));
  return r.ok ? answer(204) : ec2ErrorAnswer(action, r.error);
}

/** Terminates every machine of the pool, 100 per call. */
export async function removeAll(o: Operations): Promise<ShimAnswer> {
  const f = await listPool(o.ec2, o.scope);
  if (!f.ok) return ec2ErrorAnswer("DescribeInstances", f.error);
  const ids = f.value.map((i) => i.instanceId);
  for (let i = 0; i < ids.length; i += 100) {
    const r = await o.ec2.call("TerminateInstances", instanceIdsParams(ids.slice(i, i + 100)));
    if (!r.ok && r.error.code !== "InvalidInstanceID.NotFound") return ec2ErrorAnswer("TerminateInstances", r.error);
  }
  return answer(204);
}
