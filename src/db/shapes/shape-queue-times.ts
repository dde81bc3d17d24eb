import type { ShapeParts } from "../../shapes/machine-shape";

/**
 * A shaped scale set's queue waits by shape: each job that started in a window, with the shape of
 * the machine that ran it and how long it waited (queued → started); ui/charts/shape-queue-times.ts
 * groups them. Jobs are
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

/** One row of SHAPE_QUEUE_WAITS. */
export type ShapeWait = Omit<ShapeParts, "spot"> & { spot: number | boolean; flavor: string; wait_ms: number };

export const shapeWaits = (result: D1Result | undefined): ShapeWait[] => (result?.results ?? []) as ShapeWait[];
