import { type FakeProject, fail } from "./compute.ts";
import { type FakeMachineType, machineTypesIn } from "./machine-types.ts";

/**
 * The fake Compute Engine's machineTypes.list: one zone's machine types (./machine-types.ts),
 * paged with maxResults and pageToken at the project's `machine_types_page_size`, each as the
 * discovery document's MachineType (test/contract/gce-discovery.test.ts checks the answer).
 */

const machineType = (p: FakeProject, zone: string, t: FakeMachineType, n: number) => ({
  kind: "compute#machineType",
  id: String(800_000 + n),
  // Compute Engine dates every predefined type at the epoch, in Pacific time.
  creationTimestamp: "1969-12-31T16:00:00.000-08:00",
  name: t.name,
  description: t.description,
  guestCpus: t.guestCpus,
  memoryMb: t.memoryMb,
  imageSpaceGb: 0,
  maximumPersistentDisks: t.maximumPersistentDisks,
  maximumPersistentDisksSizeGb: t.maximumPersistentDisksSizeGb,
  zone,
  selfLink: `${p.zoneUrl(zone)}/machineTypes/${t.name}`,
  isSharedCpu: t.isSharedCpu,
  ...(t.accelerators ? { accelerators: t.accelerators } : {}),
  ...(t.architecture ? { architecture: t.architecture } : {}),
});

export function machineTypeList(p: FakeProject, zone: string, query: URLSearchParams) {
  p.checkZone(zone);
  p.require("compute.machineTypes.list", `projects/${p.id}/zones/${zone}`);
  if (query.get("filter")) throw fail(400, "invalid", "This fake lists machine types without a filter.");
  const max = Number(query.get("maxResults") ?? 500);
  if (!Number.isInteger(max) || max < 0 || max > 500)
    throw fail(400, "invalid", `Invalid value for field 'maxResults': '${query.get("maxResults")}'. Must be in the range [0, 500].`);
  const all = machineTypesIn(zone);
  const token = query.get("pageToken");
  const start = token ? Number(Buffer.from(token, "base64url").toString()) : 0;
  if (!Number.isInteger(start) || start < 0) throw fail(400, "invalid", `Invalid value for field 'pageToken': '${token}'.`);
  const size = Math.min(max || 500, p.config.machine_types_page_size);
  const next = start + size < all.length ? Buffer.from(String(start + size)).toString("base64url") : undefined;
  return {
    kind: "compute#machineTypeList",
    id: `projects/${p.id}/zones/${zone}/machineTypes`,
    items: all.slice(start, start + size).map((t) => machineType(p, zone, t, all.indexOf(t))),
    selfLink: `${p.zoneUrl(zone)}/machineTypes`,
    ...(next ? { nextPageToken: next } : {}),
  };
}
