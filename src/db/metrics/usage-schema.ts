import { integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";

/**
 * What the coordinator spent in Cloudflare's billing units, by UTC day, unit and what caused it
 * (lib/usage-tally.ts names both). A day's row only grows; the month is the sum of its days.
 * Written by the counters' flush (observability/op-counters.ts), read by /metrics, the dashboard
 * and the setup check (db/metrics/usage-store.ts).
 */
export const usageDays = sqliteTable(
  "usage_days",
  {
    /** `YYYY-MM-DD`, UTC, the day Cloudflare's daily limits reset on. */
    day: text("day").notNull(),
    unit: text("unit").notNull(),
    kind: text("kind").notNull(),
    value: integer("value").notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.day, t.unit, t.kind] })],
);
