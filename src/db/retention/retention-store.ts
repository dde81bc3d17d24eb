import { JOB_LATENCY_BUCKETS } from "../../observability/op-counters";
import type { PruneTarget } from "../../retention/batch-plan";
import { lapStartBefore, walkScanRows, walkStep } from "../../retention/key-walk";
import type { Cutoffs } from "../../retention/settings";

/**
 * Retention's SQL (src/retention/ decides how many batches and in which order). Every prune
 * statement deletes "the oldest N eligible rows" of one table, bound as `?1` = the cutoff
 * (unix ms) and `?2` = N, and reports how many went (`meta.changes`).
 *
 * Never a live row: a job goes only when completed (or left queued unmatched) and no live
 * instance serves it; an instance (its history in its row) only when deleted and no unfinished
 * job names it (its `job_id`, or the job's runner name).
 *
 * A new table to prune is one entry in PRUNE_TABLES: for a plain table,
 * `{ table, window: "history", ...byAge(table, column) }`.
 */

export interface PruneTable extends PruneTarget {
  /**
   * Run just before the DELETE, in the same batch (one transaction): adds what the rows about to
   * go counted for to the `counters` table, so totals /metrics shows as counters never go down.
   * Bound `?1` cutoff, `?2` N, `?3` now, then `params`.
   */
  keep?: { sql: string; params: unknown[] };
  /** The DELETE, bound `?1` cutoff, `?2` N. */
  sql: string;
  /**
   * A table with no index on age, walked by its key instead (src/retention/key-walk.ts): `sql`
   * and `keep` are then bound `?1` window start (exclusive), `?2` window end, `?3` cutoff (and
   * `keep` `?4` now).
   */
  walk?: { read: string; cursor: string };
}

/** The rowids of the oldest N rows of `table` whose `column` is before the cutoff (and match `where`), in `order`. */
function oldest(table: string, column: string, where = "", order = `${column}, rowid`): string {
  return `SELECT rowid FROM ${table} WHERE ${column} < ?1 ${where} ORDER BY ${order} LIMIT ?2`;
}

/** A table whose rows go by age alone: `{ table, window, ...byAge(table, column) }`. */
function byAge(table: string, column: string, where = ""): Pick<PruneTable, "sql" | "queries"> {
  return { sql: `DELETE FROM ${table} WHERE rowid IN (${oldest(table, column, where)})`, queries: 1 };
}

/** `byAge`, plus a statement that keeps the totals of the rows about to go (see PruneTable.keep). */
function byAgeKeeping(
  table: string,
  column: string,
  where: string,
  keep: (rows: string) => string,
  params: unknown[] = [],
  order?: string,
) {
  const rows = oldest(table, column, where, order);
  return { sql: `DELETE FROM ${table} WHERE rowid IN (${rows})`, queries: 2, keep: { sql: keep(rows), params } };
}

const ADD_TO_COUNTERS = "ON CONFLICT(name) DO UPDATE SET value = value + excluded.value, updated_at = excluded.updated_at";

/** Counter names for the totals of pruned rows, read back by the metrics store. */
export const PRUNED_WEBHOOKS = "pruned.webhooks";
export const PRUNED_JOB_LATENCY = "pruned.job_latency";

// Through each scale set's (scale_set_id, deleted_at) index: instances have no index on status or
// deletion time alone (migrations 0029, 0030), and every instance belongs to a scale set.
const PRUNABLE_INSTANCE = `i.scale_set_id IN (SELECT id FROM scale_sets) AND i.deleted_at < ?1
  AND NOT EXISTS (SELECT 1 FROM jobs j WHERE j.seq = i.job_seq AND j.status != 'completed')
  AND NOT EXISTS (SELECT 1 FROM jobs j WHERE j.runner_name = i.name AND j.status != 'completed')`;

// A job goes when completed, or when it waited queued and unmatched (no scale set serves it, or
// the one that did is deleted) through the whole window: GitHub cancels a job no self-hosted
// runner started within 24 to 48 hours, and intake refuses a replay of its old deliveries
// (RETENTION_DAYS). A `waiting` job (held by a deployment protection rule) stays: its run may
// wait up to 35 days for approval, and its row is what lets the late `queued` through.
// The newest row stays whatever it is: seq has no AUTOINCREMENT (migration 0031), and a new row takes
// the largest seq + 1, which must not be one a deleted instance still names. The live instances'
// jobs are read once, through each scale set's (scale_set_id, deleted_at) index: instances have no
// index on job_seq (a row written by each runner's link to its job, migration 0031).
const JOB_NOT_IN_USE = `AND (status = 'completed' OR (status = 'queued' AND scale_set_id IS NULL))
  AND seq < (SELECT max(seq) FROM jobs)
  AND seq NOT IN (SELECT i.job_seq FROM instances i
                  WHERE i.scale_set_id IN (SELECT id FROM scale_sets) AND i.deleted_at IS NULL AND i.job_seq IS NOT NULL)
  AND NOT EXISTS (SELECT 1 FROM instances i WHERE i.name = jobs.runner_name AND i.status != 'deleted')`;

/**
 * The walk over webhook_deliveries (WITHOUT ROWID, keyed by the random delivery id, no index on
 * `received_at`: migration 0032). The read gives the cursor and the window after it: at most `?2`
 * keys, none when no lap is under way and the last one started after `?3`; and `cut`, the key of
 * the `?5`-th row in it past the cutoff `?4` (0-based), where a batch of that many ends.
 */
const DELIVERY_WINDOW = `WITH c AS (SELECT COALESCE(MAX(position), '') AS position, COALESCE(MAX(lap_started_at), 0) AS lap
           FROM retention_cursors WHERE name = ?1),
     w AS (SELECT delivery_id, received_at FROM webhook_deliveries
           WHERE delivery_id > (SELECT position FROM c) AND ((SELECT position FROM c) != '' OR (SELECT lap FROM c) <= ?3)
           ORDER BY delivery_id LIMIT ?2)
SELECT c.position, c.lap, s.scanned, s.last,
       (SELECT delivery_id FROM w WHERE received_at < ?4 ORDER BY delivery_id LIMIT 1 OFFSET ?5) AS cut
FROM c, (SELECT COUNT(*) AS scanned, MAX(delivery_id) AS last FROM w) s`;
const IN_DELIVERY_WINDOW = "delivery_id > ?1 AND delivery_id <= ?2 AND received_at < ?3";

export const PRUNE_TABLES: readonly PruneTable[] = [
  {
    table: "webhook_deliveries",
    window: "deliveries",
    // The window's read, then one batch: the totals, the DELETE and the cursor.
    queries: 4,
    walk: {
      read: DELIVERY_WINDOW,
      cursor: `INSERT INTO retention_cursors (name, position, lap_started_at) VALUES (?1, ?2, ?3)
ON CONFLICT(name) DO UPDATE SET position = excluded.position, lap_started_at = excluded.lap_started_at`,
    },
    // edgerunner_webhooks_total{outcome}: the stored deliveries by outcome, plus these (queue events
    // and what the backstop found share the table but are not deliveries).
    keep: {
      sql: `INSERT INTO counters (name, value, updated_at)
SELECT '${PRUNED_WEBHOOKS}|' || outcome, COUNT(*), ?4 FROM webhook_deliveries WHERE ${IN_DELIVERY_WINDOW} AND event = 'workflow_job' GROUP BY outcome
${ADD_TO_COUNTERS}`,
      params: [],
    },
    sql: `DELETE FROM webhook_deliveries WHERE ${IN_DELIVERY_WINDOW}`,
  },
  {
    table: "jobs",
    window: "history",
    // edgerunner_job_queue_latency_seconds: the started jobs in D1, plus these (per scale set:
    // each bucket, the count and the sum), so the histogram stays cumulative.
    ...byAgeKeeping(
      "jobs",
      "updated_at",
      JOB_NOT_IN_USE,
      (rows) => `INSERT INTO counters (name, value, updated_at)
SELECT '${PRUNED_JOB_LATENCY}|' || j.scale_set_id || '|' || k.value,
       SUM(CASE k.value WHEN 'count' THEN 1 WHEN 'sum_ms' THEN j.lat ELSE j.lat <= k.value * 1000 END), ?3
FROM (SELECT COALESCE(scale_set_id, '') AS scale_set_id, MAX(0, started_at - queued_at) AS lat FROM jobs
      WHERE rowid IN (${rows}) AND started_at IS NOT NULL AND queued_at IS NOT NULL) j
JOIN json_each(?4) k
GROUP BY j.scale_set_id, k.value
${ADD_TO_COUNTERS}`,
      [JSON.stringify([...JOB_LATENCY_BUCKETS, "count", "sum_ms"])],
      // Oldest first by seq, not by updated_at: jobs have no index on it (migration 0029), and the
      // walk from the oldest row finds the jobs left untouched past the cutoff first.
      "rowid",
    ),
  },
  {
    table: "instances",
    window: "history",
    queries: 1,
    // Its history (the transitions) is in its row and goes with it.
    sql: `DELETE FROM instances WHERE rowid IN (
  SELECT i.rowid FROM instances i WHERE ${PRUNABLE_INSTANCE} ORDER BY i.deleted_at LIMIT ?2)`,
  },
  // Delivery recovery's record of failed deliveries and backstop finds (src/recovery/): kept as
  // long as the delivery ids they are checked against, by `seen_at` (indexed). A delivery still
  // pending that old is past GitHub's keeping too.
  { table: "delivery_recoveries", window: "deliveries", ...byAge("delivery_recoveries", "seen_at") },
  // The audit trail (src/http/audit-trail.ts): entries older than AUDIT_RETENTION_DAYS, by `at` (indexed).
  { table: "audit_log", window: "audit", ...byAge("audit_log", "at") },
  // The dashboard's runners-by-state samples: 48 hours (retention/settings.ts SAMPLE_RETENTION_MS).
  { table: "scale_set_samples", window: "samples", ...byAge("scale_set_samples", "at") },
  // Histogram rows of scale sets that are gone (their series left /metrics with them); no cutoff.
  {
    table: "metric_histograms",
    window: "history",
    queries: 1,
    sql: `DELETE FROM metric_histograms WHERE rowid IN (
  SELECT rowid FROM metric_histograms WHERE scale_set_id NOT IN (SELECT id FROM scale_sets) LIMIT ?2)`,
  },
];

/** What one batch did: rows deleted, and whether the table has nothing more for this run. */
export interface BatchResult {
  deleted: number;
  done: boolean;
}

/** Deletes one batch of `target`: at most `limit` rows older than its cutoff. */
export async function pruneBatch(db: D1Database, target: PruneTable, cutoffs: Cutoffs, limit: number, now: number): Promise<BatchResult> {
  const cutoff = cutoffs[target.window];
  if (target.walk) return walkBatch(db, target, target.walk, cutoff, limit, now);
  const remove = db.prepare(target.sql).bind(cutoff, limit);
  const deleted = target.keep
    ? ((await db.batch([db.prepare(target.keep.sql).bind(cutoff, limit, now, ...target.keep.params), remove]))[1]!.meta.changes ?? 0)
    : ((await remove.run()).meta.changes ?? 0);
  return { deleted, done: deleted < limit };
}

async function walkBatch(
  db: D1Database,
  target: PruneTable,
  walk: NonNullable<PruneTable["walk"]>,
  cutoff: number,
  limit: number,
  now: number,
): Promise<BatchResult> {
  const scan = walkScanRows(limit);
  const row = await db
    .prepare(walk.read)
    .bind(target.table, scan, lapStartBefore(now), cutoff, limit - 1)
    .first<Record<string, unknown>>();
  const key = (v: unknown) => (v === null || v === undefined ? null : String(v));
  const cursor = { position: String(row?.position ?? ""), lapStartedAt: Number(row?.lap ?? 0) };
  const window = { scanned: Number(row?.scanned ?? 0), last: key(row?.last), cut: key(row?.cut) };
  const step = walkStep(cursor, window, scan, now);
  if (step.kind === "rest") return { deleted: 0, done: true };
  const keepCursor = db.prepare(walk.cursor).bind(target.table, step.next.position, step.next.lapStartedAt);
  if (step.to === null) {
    await keepCursor.run();
    return { deleted: 0, done: true };
  }
  const range = [step.from, step.to, cutoff];
  const statements = [
    ...(target.keep ? [db.prepare(target.keep.sql).bind(...range, now, ...target.keep.params)] : []),
    db.prepare(target.sql).bind(...range),
    keepCursor,
  ];
  const results = await db.batch(statements);
  return { deleted: results[statements.length - 2]!.meta.changes ?? 0, done: step.lapEnded };
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
