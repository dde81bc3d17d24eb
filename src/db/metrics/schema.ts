import { integer, primaryKey, real, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { updatedAt } from "../columns";

/**
 * Named monotonic counters (`webhook.rejected.<reason>`, …): what was refused without
 * storing what was refused.
 */
export const counters = sqliteTable("counters", {
  name: text("name").primaryKey(),
  value: integer("value").notNull().default(0),
  updatedAt: updatedAt(),
});

/** Histogram buckets kept in D1 (observability/histograms): one row per bucket, counts not cumulative. */
export const metricHistograms = sqliteTable(
  "metric_histograms",
  {
    metric: text("metric").notNull(),
    scaleSetId: text("scale_set_id").notNull(),
    bucket: integer("bucket").notNull(),
    count: integer("count").notNull().default(0),
    sum: real("sum").notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.metric, t.scaleSetId, t.bucket] })],
);

/** What a scale set looked like every few minutes: the dashboard's runners-by-state chart. */
export const scaleSetSamples = sqliteTable(
  "scale_set_samples",
  {
    scaleSetId: text("scale_set_id").notNull(),
    at: integer("at").notNull(),
    idle: integer("idle").notNull().default(0),
    busy: integer("busy").notNull().default(0),
    booting: integer("booting").notNull().default(0),
    other: integer("other").notNull().default(0),
    minIdle: integer("min_idle").notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.scaleSetId, t.at] })],
);

/**
 * What the coordinator spent in Cloudflare's billing units, by UTC day and what caused it, a
 * column per unit (lib/usage-tally.ts names both; TALLY_UNITS are the columns). A day's row only
 * grows; the month is the sum of its days. Written by the counters' flush
 * (observability/op-counters.ts), a row per cause, read by /metrics, the dashboard and the setup
 * check (db/metrics/usage-store.ts).
 */
export const usageDays = sqliteTable(
  "usage_days",
  {
    /** `YYYY-MM-DD`, UTC, the day Cloudflare's daily limits reset on. */
    day: text("day").notNull(),
    kind: text("kind").notNull(),
    workerRequests: integer("worker_requests").notNull().default(0),
    doRequests: integer("do_requests").notNull().default(0),
    doActiveMs: integer("do_active_ms").notNull().default(0),
    d1RowsRead: integer("d1_rows_read").notNull().default(0),
    d1RowsWritten: integer("d1_rows_written").notNull().default(0),
    doRowsRead: integer("do_rows_read").notNull().default(0),
    doRowsWritten: integer("do_rows_written").notNull().default(0),
    subrequests: integer("subrequests").notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.day, t.kind] })],
);
