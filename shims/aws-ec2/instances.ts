import type { ValidProviderInstance } from "../../src/providers/shim-protocol.ts";
import type { Ec2Api, Ec2Error } from "./ec2-api.ts";
import { describeInstancesParams, type Filter } from "./ec2-params.ts";
import { type Ec2Instance, parseDescribeInstances } from "./ec2-xml.ts";
import { TAG_CONTROLLER, TAG_NAME, TAG_POOL } from "./extra-specs.ts";

/**
 * Finding a pool's machines in EC2. Every lookup filters on the pool and controller tags the
 * shim puts on at launch, so an instance without them (or of another pool or coordinator) is
 * never seen, let alone touched. Terminated and shutting-down instances count as gone.
 */

export interface PoolScope {
  controllerId: string;
  poolId: string;
}

export const LIVE_STATES = ["pending", "running", "stopping", "stopped"];

/** DescribeInstances pages: 1,000 instances each, at most this many pages (bounds subrequests). */
export const PAGE_SIZE = 1000;
export const MAX_PAGES = 20;

export type Found<T> = { ok: true; value: T } | { ok: false; error: Ec2Error };

export function scopeFilters(scope: PoolScope): Filter[] {
  return [
    { name: `tag:${TAG_POOL}`, values: [scope.poolId] },
    { name: `tag:${TAG_CONTROLLER}`, values: [scope.controllerId] },
    { name: "instance-state-name", values: LIVE_STATES },
  ];
}

export const isInstanceId = (id: string) => /^i-(?:[0-9a-f]{8}|[0-9a-f]{17})$/.test(id);

/** Every instance matching the filters, following NextToken. */
export async function describeAll(ec2: Ec2Api, filters: Filter[]): Promise<Found<Ec2Instance[]>> {
  const out: Ec2Instance[] = [];
  let nextToken: string | undefined;
  for (let page = 0; page < MAX_PAGES; page++) {
    const r = await ec2.call("DescribeInstances", describeInstancesParams({ filters, maxResults: PAGE_SIZE, nextToken }));
    if (!r.ok) return r;
    const p = parseDescribeInstances(r.doc);
    out.push(...p.instances);
    if (!p.nextToken) return { ok: true, value: out };
    nextToken = p.nextToken;
  }
  return { ok: false, error: { code: "TooManyPages", message: `more than ${MAX_PAGES * PAGE_SIZE} instances in one pool`, status: 0 } };
}

export const listPool = (ec2: Ec2Api, scope: PoolScope) => describeAll(ec2, scopeFilters(scope));

/**
 * One machine of the pool by provider id (`i-…`) or instance name (GARM's rule for a create
 * that failed before an id was known); null when the pool has none.
 */
export async function findInstance(ec2: Ec2Api, scope: PoolScope, id: string): Promise<Found<Ec2Instance | null>> {
  let found: Found<Ec2Instance[]>;
  if (isInstanceId(id)) {
    const r = await ec2.call("DescribeInstances", describeInstancesParams({ filters: scopeFilters(scope), instanceIds: [id] }));
    if (!r.ok)
      return r.error.code === "InvalidInstanceID.NotFound" || r.error.code === "InvalidInstanceID.Malformed"
        ? { ok: true, value: null }
        : r;
    found = { ok: true, value: parseDescribeInstances(r.doc).instances };
  } else {
    found = await describeAll(ec2, [{ name: `tag:${TAG_NAME}`, values: [id] }, ...scopeFilters(scope)]);
  }
  if (!found.ok) return found;
  // Several live instances with one name cannot come from the shim; the oldest is the one it made.
  const sorted = [...found.value].sort((a, b) => (a.launchTime ?? "").localeCompare(b.launchTime ?? ""));
  return { ok: true, value: sorted[0] ?? null };
}

const ARCH: Record<string, string> = { x86_64: "amd64", arm64: "arm64", i386: "i386", x86_64_mac: "amd64", arm64_mac: "arm64" };

/** The machine as the protocol reports it (GARM's ProviderInstance), always valid by GARM's rule. */
export function toProviderInstance(i: Ec2Instance, name?: string): ValidProviderInstance {
  const addresses: { address: string; type: "public" | "private" }[] = [];
  if (i.privateIp) addresses.push({ address: i.privateIp, type: "private" });
  if (i.publicIp) addresses.push({ address: i.publicIp, type: "public" });
  return {
    provider_id: i.instanceId,
    // An instance whose Name tag someone removed is still ours (pool tags): under its id the coordinator sees an orphan and removes it.
    name: name ?? (i.tags[TAG_NAME] || i.instanceId),
    status:
      i.state === "pending" || i.state === "running" ? "running" : i.state === "stopping" || i.state === "stopped" ? "stopped" : "unknown",
    os_type: i.platform === "windows" ? "windows" : "linux",
    ...(i.architecture && ARCH[i.architecture] ? { os_arch: ARCH[i.architecture] } : {}),
    addresses,
  };
}
