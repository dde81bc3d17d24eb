/**
 * The `counters` table: named totals (outbound calls, reconcile histograms) that only ever
 * grow, and gauges (a scale set's desired runner count) where the last value wins. Writes are
 * handed back as statements, never run here: callers put them in a batch with their own
 * writes, so counting never costs a D1 round trip of its own.
 */

const ADD = `INSERT INTO counters (name, value, updated_at) VALUES (?, ?, ?)
ON CONFLICT(name) DO UPDATE SET value = value + excluded.value, updated_at = excluded.updated_at`;
const SET = `INSERT INTO counters (name, value, updated_at) VALUES (?, ?, ?)
ON CONFLICT(name) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`;

/**
 * Typed by shape rather than by D1's globals, so code that also runs in plain Node (and its
 * unit tests, with a recording stand-in) can use it; in the Worker `S` is D1PreparedStatement.
 */
export interface StatementMaker<S> {
  prepare(sql: string): { bind(...values: unknown[]): S };
}

/** Adds `by` to counter `name`, creating it at `by`. */
export function addToCounterStatement<S>(db: StatementMaker<S>, name: string, by: number, now: number): S {
  return db.prepare(ADD).bind(name, by, now);
}

/** Sets counter `name` to `value`, whatever it was. */
export function setCounterStatement<S>(db: StatementMaker<S>, name: string, value: number, now: number): S {
  return db.prepare(SET).bind(name, value, now);
}
