import { percentile } from "../ui/charts/queue-percentiles";
import { type ShapeParts, shapeText } from "../ui/shape-text";

/**
 * A shaped scale set's queue time by shape: of its jobs that started in a window, how many ran on
 * a machine of each shape and how long they waited (queued → started, p50 and p90). Jobs are
 * joined with the machine that ran them (by runner name) because the machine holds the shape
 * as resolved against the bounds, defaults filled in; a job's label carries its run id, so
 * grouping by the label would give every run a group of its own.
 */

/** At most this many started jobs are read (a sample of them, beyond), as for the queue time chart. */
const MAX_JOBS = 10_000;

/** `?1`: since when (unix ms); `?2`: the scale set. One statement, for the scale set page's batch. */
export const SHAPE_QUEUE_WAITS = `SELECT json_extract(i.shape, '$.cpu') AS cpu, json_extract(i.shape, '$.ram_gb') AS ram_gb,
    json_extract(i.shape, '$.disk_gb') AS disk_gb, json_extract(i.shape, '$.arch') AS arch, json_extract(i.shape, '$.image') AS image,
    json_extract(i.shape, '$.spot') AS spot, json_extract(i.shape, '$.gpus') AS gpus, json_extract(i.shape, '$.flavor') AS flavor,
    j.started_at - j.queued_at AS wait_ms
  FROM jobs j JOIN instances i ON i.name = j.runner_name
  WHERE j.scale_set_id = ?2 AND j.status IN ('in_progress', 'completed') AND j.updated_at >= ?1 AND j.started_at >= ?1
    AND j.queued_at IS NOT NULL AND i.shape IS NOT NULL
  LIMIT ${MAX_JOBS}`;

export interface ShapeQueueTime {
  /** The shape in a line (ui/shape-text.ts). */
  shape: string;
  jobs: number;
  /** Seconds. */
  p50: number;
  p90: number;
  /** The flavors its machines got, in the order first seen. */
  flavors: string[];
}

type WaitRow = Omit<ShapeParts, "spot"> & { spot: number | boolean; flavor: string; wait_ms: number };

/** The rows of SHAPE_QUEUE_WAITS grouped by shape, the shape with the most jobs first. A negative wait (clocks) counts as zero. */
export function shapeQueueTimes(result: D1Result | undefined): ShapeQueueTime[] {
  const groups = new Map<string, { waits: number[]; flavors: Set<string> }>();
  for (const r of (result?.results ?? []) as WaitRow[]) {
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
