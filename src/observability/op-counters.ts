/**
 * Counts of outbound calls (GitHub, provider shims) and reconcile runs, kept in memory and
 * written to D1's `counters` table in one batch by whoever flushes (the scale set object at
 * the end of a reconcile run, the Worker after a request that made calls), so a call never
 * costs a D1 round trip of its own and the totals survive isolate restarts.
 *
 * Counter names are `<family>|<label>|<label>`: labels never contain `|` (operations are
 * code constants, providers are resource names, credentials and scale sets are UUIDs).
 */

import { errorText, logError } from "./log";

const pending = new Map<string, number>();

export const counterName = (family: string, ...labels: string[]) => [family, ...labels].join("|");

export function count(name: string, by = 1): void {
  pending.set(name, (pending.get(name) ?? 0) + by);
}

/** One GitHub REST request: `ok` is false for no answer or an answer the operation did not expect. */
export function countGithubCall(operation: string, credentialId: string, ok: boolean): void {
  count(counterName("github.calls", operation, credentialId));
  if (!ok) count(counterName("github.errors", operation, credentialId));
}

/** One provider shim request. */
export function countShimCall(operation: string, provider: string, ok: boolean): void {
  count(counterName("shim.calls", operation, provider));
  if (!ok) count(counterName("shim.errors", operation, provider));
}

/** Upper bounds (seconds) of the reconcile duration histogram. */
export const RECONCILE_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

/** One reconcile run of a scale set: its duration, into the histogram's buckets. */
export function countReconcile(scaleSetId: string, durationMs: number): void {
  const seconds = durationMs / 1000;
  for (const le of RECONCILE_BUCKETS) if (seconds <= le) count(counterName("reconcile.bucket", scaleSetId, String(le)));
  count(counterName("reconcile.count", scaleSetId));
  count(counterName("reconcile.duration_ms", scaleSetId), Math.max(0, Math.round(durationMs)));
}

export const hasPendingCounts = (): boolean => pending.size > 0;

/** Whether any GitHub or shim call is waiting to be written. */
export const hasPendingCalls = (): boolean => [...pending.keys()].some((k) => k.startsWith("github.") || k.startsWith("shim."));

const UPSERT = `INSERT INTO counters (name, value, updated_at) VALUES (?, ?, ?)
ON CONFLICT(name) DO UPDATE SET value = value + excluded.value, updated_at = excluded.updated_at`;
const SET = `INSERT INTO counters (name, value, updated_at) VALUES (?, ?, ?)
ON CONFLICT(name) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`;

/**
 * Takes everything pending as upsert statements (the caller batches them, alone or with its
 * own writes). If the batch fails, hand the counts back with `restore`.
 */
// Typed by shape rather than by D1's globals, so Node-side code (the reference shims) can load
// the counting half of this file; in the Worker `S` is D1PreparedStatement.
interface StatementMaker<S> {
  prepare(sql: string): { bind(...values: unknown[]): S };
}
interface Batcher<S> extends StatementMaker<S> {
  batch(statements: S[]): Promise<unknown>;
}

export function drainCounterStatements<S>(db: StatementMaker<S>, now = Date.now()): { statements: S[]; restore: () => void } {
  const taken = [...pending.entries()];
  pending.clear();
  return {
    statements: taken.map(([name, value]) => db.prepare(UPSERT).bind(name, value, now)),
    restore: () => {
      for (const [name, value] of taken) count(name, value);
    },
  };
}

/** A gauge-like row (the last value wins), e.g. a scale set's desired runner count. */
export function setCounterStatement<S>(db: StatementMaker<S>, name: string, value: number, now = Date.now()): S {
  return db.prepare(SET).bind(name, value, now);
}

/** Writes pending counts (plus `extra` statements) in one batch; never throws. */
export async function flushCounters<S>(db: Batcher<S>, extra: S[] = []): Promise<void> {
  const { statements, restore } = drainCounterStatements(db);
  const all = [...statements, ...extra];
  if (!all.length) return;
  try {
    await db.batch(all);
  } catch (e) {
    restore();
    logError({ event: "counters_flush_failed", error: errorText(e) });
  }
}
