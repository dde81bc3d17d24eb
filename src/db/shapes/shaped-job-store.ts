import type { QueuedShapedJob } from "../../shapes/shaped-jobs";
import { hasServingTwin } from "../jobs/job-twins";

/**
 * A shaped scale set's queue (src/shapes): the jobs its object judges each pass, and the
 * refusals it writes back on the jobs' rows. Refused jobs are left out of the queue and of the
 * demand count (scaleset/snapshot-store.ts), so a job is judged, and its warning logged, once.
 */

/** At most this many queued jobs are judged a pass: more than any scale set's creates in one. */
export const SHAPED_QUEUE_LIMIT = 500;

/** The statement for the snapshot's batch: empty for a scale set that is not shaped (one round trip either way). */
export function shapedQueueStatement(db: D1Database, scaleSetId: string): D1PreparedStatement {
  return db
    .prepare(
      `SELECT j.seq, j.id, j.run_id, j.labels FROM jobs j
        WHERE j.scale_set_id = ?1 AND j.status IN ('queued', 'waiting') AND j.refusal IS NULL AND NOT ${hasServingTwin()}
          AND EXISTS (SELECT 1 FROM scale_sets s WHERE s.id = ?1 AND s.shape IS NOT NULL)
        ORDER BY coalesce(j.queued_at, j.created_at), j.seq LIMIT ${SHAPED_QUEUE_LIMIT}`,
    )
    .bind(scaleSetId);
}

export function shapedQueueFrom(rows: Record<string, unknown>[]): QueuedShapedJob[] {
  return rows.map((r) => ({ seq: r.seq as number, id: r.id as number, runId: r.run_id as number, labels: JSON.parse(r.labels as string) }));
}

/** Records why each job gets no machine (one statement, whatever the count); a job refused before keeps its first reason. */
export async function recordRefusals(db: D1Database, refusals: readonly { seq: number; problem: string }[], at: number): Promise<void> {
  if (!refusals.length) return;
  await db
    .prepare(
      `UPDATE jobs SET refusal = json_extract(r.value, '$.problem'), updated_at = ?2
         FROM json_each(?1) r
        WHERE jobs.seq = json_extract(r.value, '$.seq') AND jobs.refusal IS NULL`,
    )
    .bind(JSON.stringify(refusals.map((r) => ({ seq: r.seq, problem: r.problem.slice(0, 500) }))), at)
    .run();
}
