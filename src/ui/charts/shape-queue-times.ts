import type { ShapeWait } from "../../db/shapes/shape-queue-times";
import { shapeText } from "../../shapes/machine-shape";
import { percentile } from "./queue-percentiles";

/** A shaped scale set's queue time by shape, for its page: how many jobs ran on each shape and their p50 and p90 wait. */

export interface ShapeQueueTime {
  /** The shape in a line (shapes/machine-shape.ts shapeText). */
  shape: string;
  jobs: number;
  /** Seconds. */
  p50: number;
  p90: number;
  /** The flavors its machines got, in the order first seen. */
  flavors: string[];
}

/** The waits grouped by shape, the shape with the most jobs first. A negative wait (clocks) counts as zero. */
export function shapeQueueTimes(waits: readonly ShapeWait[]): ShapeQueueTime[] {
  const groups = new Map<string, { waits: number[]; flavors: Set<string> }>();
  for (const r of waits) {
    const key = shapeText({ ...r, spot: Boolean(r.spot) });
    const g = groups.get(key) ?? { waits: [], flavors: new Set<string>() };
    g.waits.push(Math.max(0, r.wait_ms) / 1000);
    g.flavors.add(r.flavor);
    groups.set(key, g);
  }
  return [...groups]
    .map(([shape, g]) => {
      const sorted = g.waits.sort((a, b) => a - b);
      return { shape, jobs: sorted.length, p50: percentile(sorted, 50)!, p90: percentile(sorted, 90)!, flavors: [...g.flavors] };
    })
    .sort((a, b) => b.jobs - a.jobs || a.shape.localeCompare(b.shape));
}
