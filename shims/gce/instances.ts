import type { ValidProviderInstance } from "../../src/providers/shim-protocol.ts";
import { LABEL_CONTROLLER, LABEL_POOL } from "./extra-specs.ts";
import type { GceApi, GceError } from "./gce-api.ts";

/**
 * Finding a pool's machines in Compute Engine: aggregatedList across every zone, filtered on
 * the pool and controller labels the shim puts on at insert, so an instance without them (or
 * of another pool or coordinator) is never seen, let alone touched.
 */

export interface PoolScope {
  project: string;
  controllerId: string;
  poolId: string;
  /** labelValue(controllerId), labelValue(poolId). */
  controllerLabel: string;
  poolLabel: string;
}

/** The Instance fields the shim reads. */
export interface GceInstance {
  id: string;
  name: string;
  zone: string;
  status: string;
  machineType?: string;
  creationTimestamp?: string;
  labels?: Record<string, string>;
  scheduling?: { provisioningModel?: string };
  networkInterfaces?: { networkIP?: string; accessConfigs?: { natIP?: string }[] }[];
  disks?: { licenses?: string[] }[];
}

export const PAGE_SIZE = 500;
export const MAX_PAGES = 20;

export type Found<T> = { ok: true; value: T } | { ok: false; error: GceError };

const quote = (v: string) => `"${v.replace(/["\\]/g, "\\$&")}"`;

export const scopeFilter = (s: PoolScope) =>
  `(labels.${LABEL_POOL} = ${quote(s.poolLabel)}) (labels.${LABEL_CONTROLLER} = ${quote(s.controllerLabel)})`;

/** The zone's short name from its URL (…/zones/us-central1-a → us-central1-a). */
export const zoneName = (zoneUrl: string) => zoneUrl.slice(zoneUrl.lastIndexOf("/") + 1);

export const ours = (i: GceInstance, s: PoolScope) =>
  i.labels?.[LABEL_POOL] === s.poolLabel && i.labels?.[LABEL_CONTROLLER] === s.controllerLabel;

/** Every instance matching the filter in the project, following nextPageToken. */
export async function aggregated(gce: GceApi, project: string, filter: string): Promise<Found<GceInstance[]>> {
  const out: GceInstance[] = [];
  let pageToken: string | undefined;
  for (let page = 0; page < MAX_PAGES; page++) {
    const r = await gce.call({
      method: "compute.instances.aggregatedList",
      http: "GET",
      path: `projects/${project}/aggregated/instances`,
      query: { filter, maxResults: String(PAGE_SIZE), pageToken, returnPartialSuccess: "true" },
    });
    if (!r.ok) return r;
    for (const scoped of Object.values((r.value.items ?? {}) as Record<string, { instances?: GceInstance[] }>))
      out.push(...(scoped.instances ?? []));
    if (!r.value.nextPageToken) return { ok: true, value: out };
    pageToken = r.value.nextPageToken;
  }
  return {
    ok: false,
    error: {
      reason: "TooManyPages",
      message: `more than ${MAX_PAGES * PAGE_SIZE} instances in one pool`,
      status: 0,
      method: "compute.instances.aggregatedList",
    },
  };
}

export const listPool = (gce: GceApi, s: PoolScope) => aggregated(gce, s.project, scopeFilter(s));

/**
 * One machine of the pool by provider id (GCE's numeric instance id) or instance name (GARM's
 * rule for a create that failed before an id was known); null when the pool has none.
 */
export async function findInstance(gce: GceApi, s: PoolScope, id: string): Promise<Found<GceInstance | null>> {
  const by = /^[0-9]{1,20}$/.test(id) ? `(id = ${id})` : `(name = ${quote(id)})`;
  const found = await aggregated(gce, s.project, `${by} ${scopeFilter(s)}`);
  if (!found.ok) return found;
  // Two zones may hold one name; the shim makes one, so the oldest is it.
  const sorted = [...found.value].sort((a, b) => (a.creationTimestamp ?? "").localeCompare(b.creationTimestamp ?? ""));
  return { ok: true, value: sorted[0] ?? null };
}

const RUNNING = new Set(["PROVISIONING", "STAGING", "RUNNING", "REPAIRING"]);
const STOPPED = new Set(["STOPPING", "STOPPED", "TERMINATED", "SUSPENDING", "SUSPENDED"]);
/** Arm machine series (Tau T2A, Axion C4A, N4A): everything else GCE sells is x86-64. */
export const ARM_SERIES = /^(t2a|c4a|n4a)-/;

/** The machine as the protocol reports it (GARM's ProviderInstance). */
export function toProviderInstance(i: GceInstance, name?: string): ValidProviderInstance {
  const addresses: { address: string; type: "public" | "private" }[] = [];
  for (const n of i.networkInterfaces ?? []) {
    if (n.networkIP) addresses.push({ address: n.networkIP, type: "private" });
    for (const a of n.accessConfigs ?? []) if (a.natIP) addresses.push({ address: a.natIP, type: "public" });
  }
  const machineType = (i.machineType ?? "").slice((i.machineType ?? "").lastIndexOf("/") + 1);
  const windows = (i.disks ?? []).some((d) => (d.licenses ?? []).some((l) => l.includes("/windows-cloud/")));
  return {
    provider_id: i.id,
    name: name ?? i.name,
    status: RUNNING.has(i.status) ? "running" : STOPPED.has(i.status) ? "stopped" : "unknown",
    os_type: windows ? "windows" : "linux",
    os_arch: ARM_SERIES.test(machineType) ? "arm64" : "amd64",
    addresses,
  };
}
