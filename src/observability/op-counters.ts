/**
 * Counts of outbound calls (GitHub, provider shims) and reconcile runs, kept in memory and
 * written to D1's `counters` table in one batch by whoever flushes (the scale set object at
 * the end of a reconcile run, the Worker after a request that made calls), so a call never
 * costs a D1 round trip of its own and the totals survive isolate restarts.
 *
 * Counter names are `<family>|<label>|<label>`: labels never contain `|` (operations are
 * code constants, providers are resource names, credentials and scale sets are UUIDs).
 */

import { addToCounterStatement, type StatementMaker } from "../db/metrics/counters-store";
import { addObservationsStatement, type HistogramSeriesRow } from "../db/metrics/histogram-store";
import { addUsageStatements, usageDay, usageStatementCount } from "../db/metrics/usage-store";
import { invocationBudget, invocationSpent } from "../lib/invocation-cost";
import { peekTally, takeTally, tally, tallyPendingSince } from "../lib/usage-tally";
import { errorText, logError } from "./log";

const pending = new Map<string, number>();

export const counterName = (family: string, ...labels: string[]) => [family, ...labels].join("|");

/**
 * Job durations (queue and run time) observed and not yet written, by metric, scale set and
 * bucket: each observation was one upsert in its delivery's batch, a row written per job per
 * histogram; they now go to D1 with the counts, a bucket a row whatever the jobs in it. Whether
 * a job is observed is still decided in its delivery's transaction (db/jobs/delivery-store.ts),
 * so each is counted once; an isolate that ends loses what it had not written, as counts do.
 */
const pendingObservations = new Map<string, HistogramSeriesRow>();

/** Adds a delivery's job durations (IntakeResult.observed) to the pending ones. */
export function observeJobDurations(observed: readonly { metric: string; scaleSetId: string; bucket: number; seconds: number }[]): void {
  for (const { metric, scaleSetId, bucket, seconds } of observed) {
    const key = `${metric}|${scaleSetId}|${bucket}`;
    const row = pendingObservations.get(key) ?? { metric, scale_set_id: scaleSetId, bucket, count: 0, sum: 0 };
    row.count += 1;
    row.sum += seconds;
    pendingObservations.set(key, row);
  }
}

/** This isolate's observations not yet written (/metrics adds them to D1's). */
export const pendingHistogramRows = (): HistogramSeriesRow[] => [...pendingObservations.values()].map((r) => ({ ...r }));

/**
 * Webhook deliveries turned away, by reason (`webhook.rejected.<reason>`, the name D1 has always
 * kept them under). Counted here, never written by the rejection itself: an unauthenticated
 * request must not cost a D1 write. They reach D1 with writes made anyway (an accepted
 * delivery's batch, any flush), and /metrics adds what this isolate has not written yet.
 */
export const WEBHOOK_REJECTED = "webhook.rejected.";

export function countWebhookRejection(reason: string): void {
  count(`${WEBHOOK_REJECTED}${reason}`);
}

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

/** Upper bounds (seconds) of the queued → in_progress latency histogram (/metrics). */
export const JOB_LATENCY_BUCKETS = [1, 2, 5, 10, 20, 30, 60, 120, 300, 600, 1800, 3600];

/** Upper bounds (seconds) of the reconcile duration histogram. */
export const RECONCILE_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

/**
 * One reconcile run of a scale set: its duration, into the one bucket it falls in
 * (`reconcile.in|<scale set>|<le>`, `+Inf` past the last); /metrics adds them up into the
 * cumulative buckets. Each name is a row written per flush, so a run counts into one bucket, not
 * into each bucket above it (`reconcile.bucket`, the cumulative names written until 2026-12, are
 * still read).
 */
export function countReconcile(scaleSetId: string, durationMs: number): void {
  const seconds = durationMs / 1000;
  const le = RECONCILE_BUCKETS.find((b) => seconds <= b);
  count(counterName("reconcile.in", scaleSetId, le === undefined ? "+Inf" : String(le)));
  count(counterName("reconcile.count", scaleSetId));
  count(counterName("reconcile.duration_ms", scaleSetId), Math.max(0, Math.round(durationMs)));
}

export const hasPendingCounts = (): boolean => pending.size > 0 || pendingObservations.size > 0;

/** Whether any GitHub or shim call is waiting to be written. */
export const hasPendingCalls = (): boolean =>
  pendingObservations.size > 0 || [...pending.keys()].some((k) => k.startsWith("github.") || k.startsWith("shim."));

/**
 * How often an isolate that keeps calling out writes its counts: every flush writes each pending
 * counter, a billed row, and a booting machine's JIT config request (one GitHub call) flushing on
 * its own wrote several rows a job. /metrics adds what its isolate has not written yet.
 */
export const BUSY_FLUSH_MS = 30_000;

/** A request that called out writes the counts when the isolate has not for BUSY_FLUSH_MS. */
export const callsFlushDue = (now = Date.now()): boolean => hasPendingCalls() && now - countersWrittenAt >= BUSY_FLUSH_MS;

/**
 * The most counters one flush writes. Counts pile up per isolate, not per object: with a hundred
 * scale set objects in one isolate, each run's reconcile histogram adds a dozen names, and one
 * flush of them all would carry over a thousand statements, past Cloudflare's 1,000 D1 queries
 * per invocation (the batch would fail, be restored and fail again). The rest waits for the
 * next flush, which comes with the next run or request that called out.
 */
export const MAX_COUNTERS_PER_FLUSH = 200;

/**
 * A flush never takes its invocation past this many D1 queries: one invocation may run several
 * reconciles (a create that settles late plans again), each ending in a flush, and the
 * invocation's own work needs the rest of the 1,000.
 */
export const COUNTERS_QUERY_CEILING = 500;

/**
 * The usage tally (lib/usage-tally.ts), and the counts of an isolate whose scale sets have
 * nothing to do, go to D1 at most this often per isolate: each (unit, cause) or counter a flush
 * carries is a row written, billed like any other, so they are written in bulk. At every 5
 * minutes, ten idle scale sets wrote more rows a day this way than a thousand jobs. An isolate
 * that ends (a deploy, eviction) loses at most this much of its count.
 */
export const USAGE_FLUSH_MS = 15 * 60_000;

/** When this isolate last wrote its pending counts (any flush takes them all). */
let countersWrittenAt = 0;
export const countersFlushedAt = (): number => countersWrittenAt;

/** Whether the usage tally has waited long enough to be written. */
export function usageFlushDue(now = Date.now()): boolean {
  const since = tallyPendingSince();
  return since !== null && now - since >= USAGE_FLUSH_MS;
}

/** Writes the usage tally alone, whatever its age, in one batch (the Cron Trigger's run, which may be its isolate's last); never throws. */
export async function flushUsage<S>(db: Batcher<S>, now = Date.now()): Promise<void> {
  const { entries } = takeTally();
  if (!entries.length) return;
  // Within what the invocation has left of its D1 queries (50 on the Free plan): the rest waits.
  // A statement per cause, so the causes that do not fit go back whole.
  const room = Math.max(0, invocationBudget().d1Queries - (invocationSpent()?.d1Queries ?? 0) - 1);
  const kinds = [...new Set(entries.map(([, kind]) => kind))].slice(0, room);
  const writing = entries.filter(([, kind]) => kinds.includes(kind));
  for (const [unit, kind, value] of entries) if (!kinds.includes(kind)) tally(unit, kind, value);
  if (!writing.length) return;
  const day = usageDay(now);
  try {
    await db.batch(addUsageStatements(db, day, writing));
  } catch (e) {
    for (const [unit, kind, value] of writing) tally(unit, kind, value);
    logError({ event: "usage_flush_failed", error: errorText(e) });
  }
}

/** The counts not yet written whose names start with `prefix`. */
export function pendingCounts(prefix: string): Map<string, number> {
  return new Map([...pending].filter(([name]) => name.startsWith(prefix)));
}

/**
 * Takes what is pending (at most `max` counters, the oldest first; only names starting with
 * `prefix`, if given) as upsert statements (the caller batches them, alone or with its own
 * writes). If the batch fails, hand the counts back with `restore`.
 */
export function drainCounterStatements<S>(
  db: StatementMaker<S>,
  now = Date.now(),
  max = MAX_COUNTERS_PER_FLUSH,
  prefix = "",
  usage: "due" | "all" | "none" = prefix === "" ? "due" : "none",
): { statements: S[]; restore: () => void } {
  const taken = [...pending.entries()].filter(([name]) => name.startsWith(prefix)).slice(0, max);
  for (const [name] of taken) pending.delete(name);
  // Observations ride along in a full flush only (no prefix), in what room the counters left.
  const observed = prefix === "" ? [...pendingObservations.entries()].slice(0, max - taken.length) : [];
  for (const [key] of observed) pendingObservations.delete(key);
  // The usage tally rides along when it is due (or asked for), as long as the flush has room for all of it.
  const wanted = usage === "all" || (usage === "due" && usageFlushDue(now));
  const usageEntries = wanted && taken.length + observed.length + usageStatementCount(peekTally()) <= max ? takeTally() : null;
  const day = usageDay(now);
  return {
    statements: [
      ...taken.map(([name, value]) => addToCounterStatement(db, name, value, now)),
      ...observed.map(([, row]) => addObservationsStatement(db, row)),
      ...(usageEntries ? addUsageStatements(db, day, usageEntries.entries) : []),
    ],
    restore: () => {
      for (const [name, value] of taken) count(name, value);
      for (const [key, row] of observed) {
        const since = pendingObservations.get(key);
        pendingObservations.set(key, since ? { ...since, count: since.count + row.count, sum: since.sum + row.sum } : row);
      }
      usageEntries?.restore();
    },
  };
}

// The scale set object writes its desired-runner gauge in the same batch as the counts.
export { setCounterStatement } from "../db/metrics/counters-store";

interface Batcher<S> extends StatementMaker<S> {
  batch(statements: S[]): Promise<unknown>;
}

/**
 * How many counters a flush may carry beside `others` statements of its own: within the
 * invocation's share of D1 queries (COUNTERS_QUERY_CEILING, lower on the Free plan) and what it
 * has spent so far.
 */
export function counterRoom(others: number): number {
  const ceiling = Math.min(COUNTERS_QUERY_CEILING, invocationBudget().countersQueryCeiling);
  return Math.min(MAX_COUNTERS_PER_FLUSH, Math.max(0, ceiling - (invocationSpent()?.d1Queries ?? 0) - others));
}

/**
 * Writes pending counts (plus `extra` statements) in one batch, within the invocation's share
 * (above), with the usage tally when it is due (`usage: "all"`: whatever it holds); never throws.
 */
export async function flushCounters<S>(db: Batcher<S>, extra: S[] = [], usage: "due" | "all" = "due"): Promise<void> {
  const { statements, restore } = drainCounterStatements(db, Date.now(), counterRoom(extra.length), "", usage);
  const all = [...statements, ...extra];
  if (!all.length) return;
  try {
    await db.batch(all);
    if (statements.length) countersWrittenAt = Date.now();
  } catch (e) {
    restore();
    logError({ event: "counters_flush_failed", error: errorText(e) });
  }
}
