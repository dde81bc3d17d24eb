import type { InstanceShape } from "../../src/providers/shim-protocol.ts";
import type { ExtraSpecs } from "./extra-specs.ts";

/**
 * A shaped machine's extra specs (protocol v1.2): the job's shape applied over the pool's. Pure.
 * `disk_gb` is the boot disk's size, as `disk_size_gb` would be; `spot: true` is
 * `capacity: "spot"` (Spot only, no standard fallback: the job asked for Spot); `spot: false`
 * leaves the pool's capacity as it is.
 */

/** Compute Engine's smallest boot disk (and extra_specs' disk_size_gb minimum). */
export const MIN_BOOT_DISK_GB = 10;

export function shapedSpecs(specs: ExtraSpecs, shape: InstanceShape): { ok: true; specs: ExtraSpecs } | { ok: false; problem: string } {
  if (shape.disk_gb !== null && shape.disk_gb < MIN_BOOT_DISK_GB)
    return { ok: false, problem: `shape.disk_gb ${shape.disk_gb} is under Compute Engine's smallest boot disk, ${MIN_BOOT_DISK_GB} GB` };
  return {
    ok: true,
    specs: {
      ...specs,
      ...(shape.disk_gb !== null ? { disk_size_gb: shape.disk_gb } : {}),
      ...(shape.spot ? { capacity: "spot" as const } : {}),
    },
  };
}
