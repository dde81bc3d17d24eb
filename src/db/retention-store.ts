import type { PruneTarget } from "../retention/batch-plan";
import type { Cutoffs } from "../retention/settings";

/**
 * Retention's SQL (src/retention/ decides how many batches and in which order). Every prune
 * statement deletes "the oldest N eligible rows" of one table, bound as `?1` = the cutoff
 * (unix ms) and `?2` = N, and reports how many went (`meta.changes`).
 *
 * Never a live row: a job goes only when completed and no live instance serves it; an instance
 * only when deleted and no unfinished job names it (its `job_id`, or the job's runner name); its
 * transitions go first, then the instance (so the counts are exact: no cascade does it unseen).
 *
 * A new table to prune is one entry in PRUNE_TABLES (for a plain table, `byAge`).
 */

export interface PruneTable extends PruneTarget {
  sql: string;
}

/** The rows of `table` whose `column` is before the cutoff (and match `where`), oldest first. */
function byAge(table: string, column: string, where = ""): string {
  return `DELETE FROM ${table} WHERE rowid IN (SELECT rowid FROM ${table} WHERE ${column} < ?1 ${where} ORDER BY ${column} LIMIT ?2)`;
}

const PRUNABLE_INSTANCE = `i.status = 'deleted' AND i.status_changed_at < ?1
  AND NOT EXISTS (SELECT 1 FROM jobs j WHERE j.id = i.job_id AND j.status != 'completed')
  AND NOT EXISTS (SELECT 1 FROM jobs j WHERE j.runner_name = i.name AND j.status != 'completed')`;

export const PRUNE_TABLES: readonly PruneTable[] = [
  { table: "webhook_deliveries", window: "deliveries", sql: byAge("webhook_deliveries", "received_at") },
  {
    table: "jobs",
    window: "history",
    sql: byAge(
      "jobs",
      "updated_at",
      `AND status = 'completed'
       AND NOT EXISTS (SELECT 1 FROM instances i WHERE i.job_id = jobs.id AND i.status != 'deleted')
       AND NOT EXISTS (SELECT 1 FROM instances i WHERE i.name = jobs.runner_name AND i.status != 'deleted')`,
    ),
  },
  {
    table: "instance_transitions",
    window: "history",
    sql: `DELETE FROM instance_transitions WHERE id IN (
  SELECT t.id FROM instances i JOIN instance_transitions t ON t.instance_id = i.id
  WHERE ${PRUNABLE_INSTANCE} ORDER BY i.status_changed_at, t.id LIMIT ?2)`,
  },
  {
    table: "instances",
    window: "history",
    after: "instance_transitions",
    sql: `DELETE FROM instances WHERE rowid IN (
  SELECT i.rowid FROM instances i
  WHERE ${PRUNABLE_INSTANCE} AND NOT EXISTS (SELECT 1 FROM instance_transitions t WHERE t.instance_id = i.id)
  ORDER BY i.status_changed_at LIMIT ?2)`,
  },
];

/** Deletes one batch of `target`: at most `limit` rows older than its cutoff. Returns how many went. */
export async function pruneBatch(db: D1Database, target: PruneTable, cutoffs: Cutoffs, limit: number): Promise<number> {
  const res = await db.prepare(target.sql).bind(cutoffs[target.window], limit).run();
  return res.meta.changes ?? 0;
}

export interface RetentionRun {
  startedAt: number;
  durationMs: number;
  deleted: Record<string, number>;
  queries: number;
  complete: boolean;
  error: string | null;
}

/** Replaces the figures of the last run. */
export async function saveLastRun(db: D1Database, run: RetentionRun): Promise<void> {
  await db
    .prepare(
      `INSERT INTO retention_last_run (id, started_at, duration_ms, deleted, queries, complete, error) VALUES (1, ?, ?, ?, ?, ?, ?)
       ON CONFLICT(id) DO UPDATE SET started_at = excluded.started_at, duration_ms = excluded.duration_ms, deleted = excluded.deleted,
         queries = excluded.queries, complete = excluded.complete, error = excluded.error`,
    )
    .bind(run.startedAt, run.durationMs, JSON.stringify(run.deleted), run.queries, run.complete ? 1 : 0, run.error)
    .run();
}

/** The statement that reads the last run (for a caller's batch); `parseLastRun` reads its result. */
export function lastRunStatement(db: D1Database): D1PreparedStatement {
  return db.prepare("SELECT started_at, duration_ms, deleted, queries, complete, error FROM retention_last_run WHERE id = 1");
}

export function parseLastRun(rows: Record<string, unknown>[]): RetentionRun | null {
  const r = rows[0];
  if (!r) return null;
  let deleted: Record<string, number> = {};
  try {
    deleted = JSON.parse(String(r.deleted)) as Record<string, number>;
  } catch {
    // A row this code did not write: show the run without its per-table figures.
  }
  return {
    startedAt: Number(r.started_at),
    durationMs: Number(r.duration_ms),
    deleted,
    queries: Number(r.queries),
    complete: Number(r.complete) === 1,
    error: r.error === null || r.error === undefined ? null : String(r.error),
  };
}
