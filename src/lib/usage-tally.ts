/**
 * What the coordinator spends in Cloudflare's billing units, by what caused it, tallied in memory
 * where it is spent and written to D1 with other writes at most once a minute
 * (observability/op-counters.ts drains it). Rows read and written come from each D1 result's
 * `meta` and each Durable Object SQL cursor; requests and active time from the invocation
 * wrappers (src/index.ts, scaleset/executor/invocation-record.ts). A tally never costs a write of
 * its own: counting must not be what the count finds.
 *
 * The kind is what caused the spending (`webhook`, `bootstrap`, `reconcile`, `listener`,
 * `retention`, `dashboard`, …): the innermost measured scope that names one
 * (lib/invocation-cost.ts `currentKind`).
 */

/** What is tallied: the billed units (active milliseconds become GB-s when priced), plus subrequests (free, but each invocation may make only so many). */
export const TALLY_UNITS = [
  "worker_requests",
  "do_requests",
  "do_active_ms",
  "d1_rows_read",
  "d1_rows_written",
  "do_rows_read",
  "do_rows_written",
  "subrequests",
] as const;
export type TallyUnit = (typeof TALLY_UNITS)[number];

/** Spending no scope claimed (work outside any measured invocation, which only tests do). */
export const UNATTRIBUTED = "other";

const pending = new Map<string, number>();
let since: number | null = null;

const key = (unit: TallyUnit, kind: string) => `${unit}|${kind}`;

/** Adds `by` of `unit` to what `kind` spent. */
export function tally(unit: TallyUnit, kind: string, by = 1): void {
  if (!(by > 0)) return;
  since ??= Date.now();
  const k = key(unit, kind);
  pending.set(k, (pending.get(k) ?? 0) + by);
}

/** When the oldest count not yet taken was made (null: nothing pending). */
export const tallyPendingSince = (): number | null => since;

/** Takes everything pending as `[unit, kind, value]`; `restore` hands it back when the write failed. */
export function takeTally(): { entries: [TallyUnit, string, number][]; restore: () => void } {
  const entries = [...pending].map(([k, v]): [TallyUnit, string, number] => {
    const bar = k.indexOf("|");
    return [k.slice(0, bar) as TallyUnit, k.slice(bar + 1), v];
  });
  const takenSince = since;
  pending.clear();
  since = null;
  return {
    entries,
    restore: () => {
      for (const [unit, kind, v] of entries) tally(unit, kind, v);
      if (takenSince !== null) since = Math.min(since ?? takenSince, takenSince);
    },
  };
}

/** What is pending now, without taking it (/metrics adds it to what D1 holds). */
export function peekTally(): [TallyUnit, string, number][] {
  return [...pending].map(([k, v]) => {
    const bar = k.indexOf("|");
    return [k.slice(0, bar) as TallyUnit, k.slice(bar + 1), v];
  });
}

/**
 * What is pending now as rows of `day` (today), to add to the month D1 holds: what the usage API,
 * the dashboard's overview and the setup check read, so a count this isolate has not written yet
 * is not missing from any of them. Other isolates' unwritten counts are (at most 15 minutes' worth).
 */
export function pendingUsageRows(day: string): { day: string; unit: string; kind: string; value: number }[] {
  return peekTally().map(([unit, kind, value]) => ({ day, unit, kind, value }));
}
