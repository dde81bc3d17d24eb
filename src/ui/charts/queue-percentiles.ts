/**
 * Queue time per hour, for the dashboard's chart: the jobs that started in each hour of a window,
 * and the 50th and 95th percentile of how long they waited. Pure; the dashboard reads the waits
 * of the last 24 hours from the jobs table (db/dashboard/dashboard-rows.ts).
 */

export const HOUR_MS = 3_600_000;

/** One started job: when it started, and how long it waited from queued (GitHub's times, ms). */
export interface QueueWait {
  startedAt: number;
  waitMs: number;
}

export interface HourPercentiles {
  /** The start of the hour (unix ms, on the hour). */
  hour: number;
  jobs: number;
  /** Seconds. */
  p50: number;
  p95: number;
}

/** The nearest-rank percentile (0 < p ≤ 100) of ascending values; null for none. */
export function percentile(sorted: readonly number[], p: number): number | null {
  if (!sorted.length) return null;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1]!;
}

/**
 * Each hour that overlaps the `hours` before `now` in which jobs started (the oldest and the
 * current hour partly: only jobs that started within the window count), oldest first, with the
 * percentiles of their waits. Hours without a started job are left out: the chart shows a gap
 * rather than a wait of zero. A negative wait (clocks) counts as zero.
 */
export function hourlyQueuePercentiles(waits: readonly QueueWait[], now: number, hours = 24): HourPercentiles[] {
  const from = now - hours * HOUR_MS;
  const byHour = new Map<number, number[]>();
  for (const w of waits) {
    if (w.startedAt < from || w.startedAt > now) continue;
    const hour = Math.floor(w.startedAt / HOUR_MS) * HOUR_MS;
    const values = byHour.get(hour) ?? [];
    values.push(Math.max(0, w.waitMs) / 1000);
    byHour.set(hour, values);
  }
  return [...byHour]
    .sort(([a], [b]) => a - b)
    .map(([hour, values]) => {
      const sorted = values.sort((a, b) => a - b);
      return { hour, jobs: sorted.length, p50: percentile(sorted, 50)!, p95: percentile(sorted, 95)! };
    });
}
