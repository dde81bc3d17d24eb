import { TALLY_UNITS, type TallyUnit } from "../../lib/usage-tally";
import type { StatementMaker } from "./counters-store";

/**
 * The `usage_days` table (schema.ts here): Cloudflare billing units by day and cause, a column
 * per unit, so a flush writes a row per cause it counted rather than one per unit and cause (an
 * isolate with nothing to do wrote about 20 rows every 15 minutes). Writes are statements the
 * counters' flush batches with its own (never a round trip of their own); reads take a range of
 * days by the primary key, so a month costs its own rows only, and come back a row per day, unit
 * and cause, as every reader wants them.
 */

const COLUMNS = TALLY_UNITS.join(", ");
const ADD = `INSERT INTO usage_days (day, kind, ${COLUMNS}) VALUES (?, ?, ${TALLY_UNITS.map(() => "?").join(", ")})
ON CONFLICT(day, kind) DO UPDATE SET ${TALLY_UNITS.map((u) => `${u} = ${u} + excluded.${u}`).join(", ")}`;

/** The table's rows as (day, unit, kind, value), one per unit with something counted, for days `?1` to `?2`. */
const ROWS_OF_DAYS = `SELECT d.day, u.key AS unit, d.kind, u.value AS value
FROM usage_days d, json_each(json_object(${TALLY_UNITS.map((u) => `'${u}', d.${u}`).join(", ")})) u
WHERE d.day >= ?1 AND d.day <= ?2 AND u.value != 0`;

export interface UsageRow {
  day: string;
  unit: string;
  kind: string;
  value: number;
}

/** The UTC day of `at`, as the table keys it. */
export const usageDay = (at: number): string => new Date(at).toISOString().slice(0, 10);

/** How many statements `addUsageStatements` makes of these counts: one per cause. */
export const usageStatementCount = (entries: readonly (readonly [string, string, number])[]): number =>
  new Set(entries.map(([, kind]) => kind)).size;

/** Adds each `[unit, kind, by]` to what `kind` spent of `unit` on `day`: a statement per cause. */
export function addUsageStatements<S>(db: StatementMaker<S>, day: string, entries: readonly (readonly [TallyUnit, string, number])[]): S[] {
  const byKind = new Map<string, Map<TallyUnit, number>>();
  for (const [unit, kind, by] of entries) {
    const units = byKind.get(kind) ?? new Map<TallyUnit, number>();
    units.set(unit, (units.get(unit) ?? 0) + by);
    byKind.set(kind, units);
  }
  return [...byKind].map(([kind, units]) => db.prepare(ADD).bind(day, kind, ...TALLY_UNITS.map((u) => units.get(u) ?? 0)));
}

/** Each unit each cause spent from `from` on (`YYYY-MM-DD`, inclusive), summed over the days. */
export function usageSinceStatement<S>(db: StatementMaker<S>, from: string): S {
  return db
    .prepare(`SELECT unit, kind, SUM(value) AS value FROM (${ROWS_OF_DAYS}) GROUP BY unit, kind ORDER BY unit, kind`)
    .bind(from, "9999-12-31");
}

/** The rows of days `from` to `to` (inclusive, `YYYY-MM-DD`), as a statement to batch. */
export function usageRangeStatement<S>(db: StatementMaker<S>, from: string, to: string): S {
  return db.prepare(`${ROWS_OF_DAYS} ORDER BY d.day, unit, d.kind`).bind(from, to);
}

/** The rows of days `from` to `to` (inclusive). */
export async function readUsage(
  db: StatementMaker<{ all<T>(): Promise<{ results: T[] }> }>,
  from: string,
  to: string,
): Promise<UsageRow[]> {
  return (await usageRangeStatement(db, from, to).all<UsageRow>()).results;
}
