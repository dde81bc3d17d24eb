import { integer, sqliteTable, text } from "drizzle-orm/sqlite-core";

/**
 * What the last retention run (src/retention/) did: one row (id 1), replaced by every run, so
 * /metrics shows it whichever isolate answers.
 */
export const retentionLastRun = sqliteTable("retention_last_run", {
  id: integer("id").primaryKey(),
  startedAt: integer("started_at").notNull(),
  durationMs: integer("duration_ms").notNull(),
  /** JSON object: rows deleted per table. */
  deleted: text("deleted", { mode: "json" }).$type<Record<string, number>>().notNull(),
  /** D1 queries the run spent. */
  queries: integer("queries").notNull(),
  /** 1 when nothing eligible was left; 0 when the run stopped at its query cap (the next run goes on). */
  complete: integer("complete", { mode: "boolean" }).notNull(),
  /** Why the run stopped early, when a statement failed. */
  error: text("error"),
});

/**
 * Where retention's walk of a table by its key stands between runs (src/retention/key-walk.ts):
 * a row per walked table (webhook_deliveries).
 */
export const retentionCursors = sqliteTable("retention_cursors", {
  name: text("name").primaryKey(),
  /** The last key the walk has read; '' between laps. */
  position: text("position").notNull().default(""),
  /** When the lap under way, or the last one, started (unix ms). */
  lapStartedAt: integer("lap_started_at").notNull().default(0),
});
