import type { Flavor } from "../../src/providers/shim-protocol.ts";
import type { GceApi, GceError } from "./gce-api.ts";
import { ARM_SERIES } from "./instances.ts";

/**
 * Compute Engine's machine types as protocol v1.2 flavors: every page of machineTypes.list in
 * each of the pool's zones, the types every one of those zones has (a create may land in any of
 * them), and each as a Flavor. Pure apart from the Compute Engine calls.
 */

/** The MachineType fields a flavor is made of (the discovery document's MachineType). */
export interface GceMachineType {
  name: string;
  guestCpus?: number;
  /** MiB, whatever the name says (n2-standard-4: 16384, its 16 GB). */
  memoryMb?: number;
  accelerators?: { guestAcceleratorType?: string; guestAcceleratorCount?: number }[];
  /** ARM64 or X86_64; absent on many types (ARCHITECTURE_UNSPECIFIED), then the series says. */
  architecture?: string;
  deprecated?: { state?: string };
}

export const TYPES_PAGE_SIZE = 500;
export const MAX_TYPE_PAGES = 20;

/** Every machine type of one zone, following nextPageToken. */
export async function listMachineTypes(
  gce: GceApi,
  project: string,
  zone: string,
): Promise<{ ok: true; value: GceMachineType[] } | { ok: false; error: GceError }> {
  const out: GceMachineType[] = [];
  let pageToken: string | undefined;
  for (let page = 0; page < MAX_TYPE_PAGES; page++) {
    const r = await gce.call({
      method: "compute.machineTypes.list",
      http: "GET",
      path: `projects/${project}/zones/${zone}/machineTypes`,
      query: { maxResults: String(TYPES_PAGE_SIZE), pageToken },
    });
    if (!r.ok) return r;
    out.push(...((r.value.items ?? []) as GceMachineType[]));
    if (!r.value.nextPageToken) return { ok: true, value: out };
    pageToken = r.value.nextPageToken;
  }
  const message = `more than ${MAX_TYPE_PAGES * TYPES_PAGE_SIZE} machine types in ${zone}`;
  return { ok: false, error: { reason: "TooManyPages", message, status: 0, method: "compute.machineTypes.list" } };
}

/** The types in every zone's list, in the first zone's order (GCE describes a type the same in each zone). */
export function inEveryZone(perZone: GceMachineType[][]): GceMachineType[] {
  const [first = [], ...rest] = perZone;
  const names = rest.map((list) => new Set(list.map((m) => m.name)));
  return first.filter((m) => names.every((n) => n.has(m.name)));
}

/** OBSOLETE and DELETED types are refused on insert; DEPRECATED ones still work. */
const UNUSABLE = new Set(["OBSOLETE", "DELETED"]);

/**
 * A machine type as a flavor, or null when an insert would refuse it or it has no sizes. The
 * family is the series (`n2-standard-4` → `n2`). Spot: Compute Engine's list does not say, and
 * Google offers Spot for most series; a type that refuses it fails that create with Google's
 * error. No price: that is the Cloud Billing Catalog, another API. The boot disk is sized per
 * machine. A shared-core type (e2-small) counts the vCPUs its guest sees.
 */
export function toFlavor(m: GceMachineType): Flavor | null {
  if (!m.name || UNUSABLE.has(m.deprecated?.state ?? "")) return null;
  const vcpus = Number(m.guestCpus);
  const memory = Number(m.memoryMb);
  if (!(vcpus >= 1) || !(memory >= 1)) return null;
  const series = m.name.split("-")[0]!.toLowerCase();
  const architecture =
    m.architecture === "ARM64" ? "arm64" : m.architecture === "X86_64" ? "amd64" : ARM_SERIES.test(m.name) ? "arm64" : "amd64";
  const accelerators = (m.accelerators ?? []).filter((a) => a.guestAcceleratorType && Number(a.guestAcceleratorCount) >= 1);
  const count = accelerators.reduce((n, a) => n + Number(a.guestAcceleratorCount), 0);
  const models = [...new Set(accelerators.map((a) => a.guestAcceleratorType!))];
  return {
    name: m.name,
    vcpus: Math.round(vcpus),
    memory_mib: Math.round(memory),
    architecture,
    family: series,
    gpu: count ? { count, model: models.join(" + ") } : null,
    disk_gb: null,
    price_per_hour: null,
    spot: true,
  };
}

export function toFlavors(types: GceMachineType[]): Flavor[] {
  const byName = new Map<string, Flavor>();
  for (const m of types) {
    const f = toFlavor(m);
    if (f && !byName.has(f.name)) byName.set(f.name, f);
  }
  return [...byName.values()].sort((a, b) => a.name.localeCompare(b.name));
}
