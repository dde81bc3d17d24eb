import type { InstanceShape } from "../../src/providers/shim-protocol.ts";
import type { ExtraSpecs } from "./extra-specs.ts";
import type { HcloudServerType } from "./server-types.ts";

/**
 * A shaped create (protocol v1.2) on Hetzner Cloud: the coordinator chose the server type from
 * the flavor catalogue for one job, and the shape says what else the job needs. Hetzner can
 * honour neither spot capacity (it has none) nor a disk of another size (a server type's disk
 * is fixed), so those are refused rather than quietly ignored. Pure.
 */

/** What the shape asks that Hetzner can never do, whatever the server types: checked with the other body problems. */
export function shapeProblems(shape: InstanceShape | undefined, flavor: string): string[] {
  if (!shape) return [];
  const problems: string[] = [];
  if (shape.spot)
    problems.push("shape.spot: Hetzner Cloud has no spot (preemptible) servers; its flavor catalogue says spot: false for every type");
  if (flavor === "") problems.push("flavor: a shaped create names the server type chosen from the flavor catalogue");
  return problems;
}

/** Whether the shape needs Hetzner's server types: to check the disk, or to weigh the pool's fallback types. */
export const shapeNeedsTypes = (shape: InstanceShape | undefined, specs: ExtraSpecs) =>
  Boolean(shape && (shape.disk_gb !== null || specs.server_types));

/**
 * The extra specs a shaped create launches with, or why it cannot. The chosen type's disk must
 * hold `disk_gb`. The pool's `server_types` stay fallbacks only where they are at least the
 * chosen type (same architecture, as many cores, as much memory, a disk as large as asked): a
 * smaller one could not run the job the type was chosen for.
 */
export function shapedSpecs(
  shape: InstanceShape,
  flavor: string,
  specs: ExtraSpecs,
  types: HcloudServerType[],
): { ok: true; specs: ExtraSpecs } | { ok: false; problem: string } {
  const byName = new Map(types.map((t) => [t.name, t]));
  const chosen = byName.get(flavor);
  if (!chosen) return { ok: false, problem: `flavor: ${flavor} is not a server type Hetzner Cloud offers` };
  if (shape.disk_gb !== null && shape.disk_gb > chosen.disk)
    return {
      ok: false,
      problem: `shape.disk_gb: ${flavor} comes with a ${chosen.disk} GB disk, smaller than the ${shape.disk_gb} GB asked (a Hetzner server type's disk is fixed: the catalogue's disk_gb says which types are large enough)`,
    };
  const fits = (t: HcloudServerType | undefined) =>
    t !== undefined &&
    t.architecture === chosen.architecture &&
    t.cores >= chosen.cores &&
    t.memory >= chosen.memory &&
    t.disk >= (shape.disk_gb ?? 0);
  const fallbacks = specs.server_types?.filter((name) => fits(byName.get(name)));
  return { ok: true, specs: { ...specs, server_types: fallbacks?.length ? fallbacks : undefined } };
}
