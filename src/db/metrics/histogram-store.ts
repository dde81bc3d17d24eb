/**
 * The histograms kept in D1 (`metric_histograms`, observability/histograms.ts): one row per
 * (metric, scale set, bucket) with the bucket's own count and sum. Observations are written by
 * the statements that record what they measure (a webhook delivery's batch, a runner report's
 * status change), each an `INSERT … SELECT` that selects a row only when the event being
 * recorded really happens, ending in ADD_OBSERVATION; this store reads them back for /metrics.
 */

import type { StatementMaker } from "./counters-store";

/** The tail of every observation's upsert: the row's count and sum go up by the inserted row's. */
export const ADD_OBSERVATION =
  "ON CONFLICT(metric, scale_set_id, bucket) DO UPDATE SET count = count + excluded.count, sum = sum + excluded.sum";

/** Adds `count` observations summing `sum` to one bucket: an isolate's pending ones (observability/op-counters.ts). */
export function addObservationsStatement<S>(db: StatementMaker<S>, row: HistogramSeriesRow): S {
  return db
    .prepare(`INSERT INTO metric_histograms (metric, scale_set_id, bucket, count, sum) VALUES (?, ?, ?, ?, ?) ${ADD_OBSERVATION}`)
    .bind(row.metric, row.scale_set_id, row.bucket, row.count, row.sum);
}

export interface HistogramSeriesRow {
  metric: string;
  scale_set_id: string;
  bucket: number;
  count: number;
  sum: number;
}

/** Every row, for a caller's batch (the /metrics read); a few dozen rows per scale set at most. */
export function histogramRowsStatement<S>(db: { prepare(sql: string): S }): S {
  return db.prepare("SELECT metric, scale_set_id, bucket, count, sum FROM metric_histograms ORDER BY metric, scale_set_id, bucket");
}
