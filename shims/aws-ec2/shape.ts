import type { InstanceShape } from "../../src/providers/shim-protocol.ts";
import type { ExtraSpecs } from "./extra-specs.ts";

/**
 * A shaped machine's extra specs (protocol v1.2): the job's shape applied over the pool's. Pure.
 *
 * - `disk_gb` is the root volume's size, as `root_volume_size_gb` would be;
 * - `spot: true` is `capacity: "spot"` (spot only, no on-demand fallback: the job asked for
 *   spot); `spot: false` leaves the pool's capacity as it is;
 * - the flavor is the only instance type tried: the coordinator chose it from the pool's
 *   catalogue for this job, and another of `instance_types` could be smaller than the job needs.
 */

/** extra_specs.root_volume_size_gb's bound too: gp3's (and gp2's) largest volume, 16 TiB. */
export const MAX_ROOT_VOLUME_GB = 16_384;

export function shapedSpecs(
  specs: ExtraSpecs,
  shape: InstanceShape,
  flavor: string,
): { ok: true; specs: ExtraSpecs } | { ok: false; problem: string } {
  if (shape.disk_gb !== null && shape.disk_gb > MAX_ROOT_VOLUME_GB)
    return {
      ok: false,
      problem: `shape.disk_gb ${shape.disk_gb} is over the largest root volume the shim makes, ${MAX_ROOT_VOLUME_GB} GB`,
    };
  return {
    ok: true,
    specs: {
      ...specs,
      ...(shape.disk_gb !== null ? { root_volume_size_gb: shape.disk_gb } : {}),
      ...(shape.spot ? { capacity: "spot" as const } : {}),
      ...(flavor !== "" ? { instance_types: undefined } : {}),
    },
  };
}
