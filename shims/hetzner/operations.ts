import { SHIM_INTERFACE_VERSION_FLAVORS } from "../../src/providers/shim-protocol.ts";
import { readCreateBody, utf8base64 } from "../common/shim-request.ts";
import { answer, hcloudErrorAnswer, type ShimAnswer } from "./errors.ts";
import { parseExtraSpecs, SERVER_TYPE } from "./extra-specs.ts";
import { catalogueFor } from "./flavors.ts";
import type { HcloudApi } from "./hcloud-api.ts";
import { launch } from "./launch.ts";
import { describeAttempt, describeFailures } from "./launch-plan.ts";
import type { HcloudServerType } from "./server-types.ts";
import { type Found, findServer, listPool, type PoolScope, toProviderInstance } from "./servers.ts";
import { shapedSpecs, shapeNeedsTypes, shapeProblems } from "./shape.ts";
import { renderUserData } from "./user-data.ts";

/**
 * The protocol's operations over the Hetzner Cloud API (docs/provider-shim-protocol.md,
 * Routes), each answering the way the coordinator reads it. The HTTP side (signatures,
 * routing) is worker.ts.
 */

export interface Operations {
  api: HcloudApi;
  scope: PoolScope;
  /** The scale set's extra specs from X-Edgerunner-Pool-Extra-Specs. */
  headerSpecs: unknown;
  createDeadlineMs: number;
  /** Hetzner's server types, read through the isolate's cache (server-types.ts). */
  serverTypes: () => Promise<Found<HcloudServerType[]>>;
  /** The location whose catalogue a scale set without `locations` gets (FLAVORS_LOCATION). */
  flavorsLocation: string;
  now?: () => number;
}

// RFC 1123 hostnames, as Hetzner requires of server names.
const SERVER_NAME = /^(?=.{1,63}$)[a-zA-Z0-9]([a-zA-Z0-9-]*[a-zA-Z0-9])?$/;
// An image name such as ubuntu-24.04, or a numeric id (snapshots are used by id).
const IMAGE = /^([0-9]{1,16}|[a-z0-9][a-z0-9._-]{0,62})$/;

export const capabilities = (): ShimAnswer =>
  answer(200, {
    interface_version: SHIM_INTERFACE_VERSION_FLAVORS,
    async: false,
    idempotent_create: true,
    flavors: true,
    provider: "hetzner",
  });

/**
 * `GET /v1/flavors` (v1.2): the server types that can be had in the pool's first location (or
 * FLAVORS_LOCATION), priced there. The pool's first location is where its creates go first, so
 * its prices are the ones the pool pays.
 */
export async function flavors(o: Operations, log: Record<string, unknown> = {}): Promise<ShimAnswer> {
  const specs = parseExtraSpecs(o.headerSpecs);
  if (!specs.ok) return answer(400, { error: `cannot list flavors: ${specs.problems.join("; ")}`, details: specs.problems });
  const types = await o.serverTypes();
  if (!types.ok) return hcloudErrorAnswer("read server types", types.error, "cannot list flavors");
  const location = specs.specs.locations?.[0] ?? o.flavorsLocation;
  const { catalogue, left_out } = catalogueFor(types.value, location);
  Object.assign(log, { location, flavors: catalogue.flavors.length, server_types_left_out: left_out });
  return answer(200, catalogue);
}

export async function create(o: Operations, rawBody: string): Promise<ShimAnswer> {
  const read = readCreateBody(rawBody, o.scope.poolId);
  if (!read.ok) return answer(400, { error: read.error, ...(read.details && { details: read.details }) });
  const { instance: b, problems } = read;
  if (!SERVER_NAME.test(b.name))
    problems.push("name must be a hostname (at most 63 letters, digits and '-'), as Hetzner requires of server names");
  if (!IMAGE.test(b.image))
    problems.push(`image must be a Hetzner image name such as ubuntu-24.04 or a snapshot id, not ${JSON.stringify(b.image.slice(0, 64))}`);
  if (b.os_type !== "linux") problems.push("os_type must be linux (Hetzner Cloud has Linux images only)");
  if (b.flavor !== "" && !SERVER_TYPE.test(b.flavor))
    problems.push(`flavor must be a Hetzner server type such as cx22, not ${JSON.stringify(b.flavor.slice(0, 64))}`);
  problems.push(...shapeProblems(b.shape, b.flavor));
  const specs = parseExtraSpecs(b.extra_specs ?? o.headerSpecs);
  if (!specs.ok) problems.push(...specs.problems);
  else if (b.flavor === "" && !specs.specs.server_types)
    problems.push("no server type: set the scale set's flavor (or extra_specs.server_types)");
  if (problems.length || !specs.ok) return answer(400, { error: `cannot create ${b.name}: ${problems.join("; ")}`, details: problems });
  const userData = renderUserData(b);
  if (!userData.ok) return answer(400, { error: `cannot create ${b.name}: ${userData.problem}` });
  let launchSpecs = specs.specs;
  if (b.shape && shapeNeedsTypes(b.shape, launchSpecs)) {
    const types = await o.serverTypes();
    if (!types.ok) return hcloudErrorAnswer("read server types", types.error, `cannot create ${b.name}`);
    const shaped = shapedSpecs(b.shape, b.flavor, launchSpecs, types.value);
    if (!shaped.ok) return answer(400, { error: `cannot create ${b.name}: ${shaped.problem}`, details: [shaped.problem] });
    launchSpecs = shaped.specs;
  }

  const now = o.now ?? Date.now;
  const out = await launch(
    o.api,
    {
      name: b.name,
      image: b.image,
      flavor: b.flavor,
      specs: launchSpecs,
      scope: o.scope,
      userData: userData.text,
      deadline: now() + o.createDeadlineMs,
    },
    now,
  );
  switch (out.kind) {
    case "existing":
      return answer(200, toProviderInstance(out.server));
    case "launched": {
      const instance = toProviderInstance(out.server);
      // Shown on the instance: it runs, but not as first asked.
      if (out.failures.length)
        instance.provider_fault = utf8base64(`created as ${describeAttempt(out.attempt)} after: ${describeFailures(out.failures)}`);
      return answer(201, instance);
    }
    case "no_capacity":
      return answer(
        503,
        {
          error: `no Hetzner Cloud capacity for ${b.name}: tried ${describeFailures(out.failures)}${out.untried ? ` (${out.untried} more not tried: out of time or attempts)` : ""}`,
        },
        { "retry-after": "30" },
      );
    case "taken":
      return answer(409, { error: `server name ${b.name} is taken by server ${out.server.id}, which is not this pool's` });
    case "failed":
      return hcloudErrorAnswer(
        out.what,
        out.error,
        `cannot create ${b.name}${out.failures.length ? ` (after ${describeFailures(out.failures)})` : ""}`,
      );
  }
}

export async function get(o: Operations, id: string): Promise<ShimAnswer> {
  const f = await findServer(o.api, o.scope, id);
  if (!f.ok) return hcloudErrorAnswer("read servers", f.error);
  return f.value ? answer(200, toProviderInstance(f.value)) : answer(404, { error: `no server ${id} in this pool` });
}

export async function list(o: Operations): Promise<ShimAnswer> {
  const f = await listPool(o.api, o.scope);
  if (!f.ok) return hcloudErrorAnswer("list servers", f.error);
  return answer(200, f.value.map(toProviderInstance));
}

const CHANGES = {
  delete: { method: "DELETE", path: "", what: "delete servers" },
  start: { method: "POST", path: "/actions/poweron", what: "power servers on" },
  // A graceful ACPI shutdown: the runner's OS gets to stop cleanly.
  stop: { method: "POST", path: "/actions/shutdown", what: "shut servers down" },
} as const;

/** Delete, start or stop one server of the pool: found first, so nothing outside the pool is touched. */
export async function change(o: Operations, id: string, op: keyof typeof CHANGES): Promise<ShimAnswer> {
  const f = await findServer(o.api, o.scope, id);
  if (!f.ok) return hcloudErrorAnswer("read servers", f.error);
  if (!f.value) return answer(404, { error: `no server ${id} in this pool` });
  const c = CHANGES[op];
  const r = await o.api.call(c.method, `/servers/${f.value.id}${c.path}`);
  if (r.ok || (op === "delete" && r.error.code === "not_found")) return answer(204);
  return hcloudErrorAnswer(c.what, r.error);
}

/** Deletes every server of the pool, one call each (Hetzner has no bulk delete). */
export async function removeAll(o: Operations): Promise<ShimAnswer> {
  const f = await listPool(o.api, o.scope);
  if (!f.ok) return hcloudErrorAnswer("list servers", f.error);
  for (const s of f.value) {
    const r = await o.api.call("DELETE", `/servers/${s.id}`);
    if (!r.ok && r.error.code !== "not_found") return hcloudErrorAnswer("delete servers", r.error);
  }
  return answer(204);
}
