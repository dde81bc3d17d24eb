import type { StatementMaker } from "./counters-store";

/**
 * The `usage_days` table (schema.ts here): Cloudflare billing units by day, unit and cause.
 * Writes are statements the counters' flush batches with its own (never a round trip of their
 * own); reads take a range of days by the primary key, so a month costs its own rows only.
 */

const ADD = `INSERT INTO usage_days (day, unit, kind, value) VALUES (?, ?, ?, ?)
ON CONFLICT(day, unit, kind) DO UPDATE SET value = value + excluded.value`;

export interface UsageRow {
  day: string;
  unit: string;
  kind: string;
  value: number;
}

/** The UTC day of `at`, as the table keys it. */
export const usageDay = (at: number): string => new Date(at).toISOString().slice(0, 10);

/** Adds `by` to `unit` spent by `kind` on `day`. */
export function addUsageStatement<S>(db: StatementMaker<S>, day: string, unit: string, kind: string, by: number): S {
  return db.prepare(ADD).bind(day, unit, kind, by);
}

const RANGE = "SELECT day, unit, kind, value FROM usage_days WHERE day >= ? AND day <= ? ORDER BY day, unit, kind";

/** The rows of days `from` to `to` (inclusive, `YYYY-MM-DD`), as a statement to batch. */
export function usageRangeStatement<S>(db: StatementMaker<S>, from: string, to: string): S {
  return db.prepare(RANGE).bind(from, to);
}

/** The rows of days `from` to `to` (inclusive). */
export async function readUsage(
  db: StatementMaker<{ all<T>(): Promise<{ results: T[] }> }>,
  from: string,
  to: string,
): Promise<UsageRow[]> {
  return (await usageRangeStatement(db, from, to).all<UsageRow>()).results;
}
