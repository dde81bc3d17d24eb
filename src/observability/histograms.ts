/**
 * Histograms kept in D1 (`metric_histograms`): one row per (metric, scale set, bucket) holding
 * the bucket's own count and the sum of its observations, not cumulative, so that one
 * observation is one upsert of one row whatever bucket it falls in. `/metrics` adds the rows up
 * into Prometheus' cumulative buckets. Every isolate reads the same rows, so every scrape shows
 * the same figures. Pure: which bucket a duration falls in, and the cumulative view of the rows.
 */

/**
 * Upper bounds (seconds) of the duration histograms: from a warm pool's second or two to a
 * job that waited hours for a machine (GitHub cancels a job no runner took within 24 hours).
 */
export const DURATION_BUCKETS = [1, 2, 5, 10, 20, 30, 60, 120, 300, 600, 1200, 1800, 3600, 7200, 14400] as const;

/**
 * A row's `bucket` is the upper bound it counts under, in whole seconds; this one stands for
 * +Inf (above the last bound). Storing the bound rather than a position keeps old rows right if
 * the bounds change: a row is added to the first current bound at or above its own.
 */
export const OVERFLOW_BUCKET = -1;

/** The histograms kept in D1: the name each is stored and exported under, and its HELP text. */
export const HISTOGRAMS = {
  jobQueue: {
    name: "edgerunner_job_queue_duration_seconds",
    help: "Time a job waited from queued to in progress (GitHub's created_at to started_at), counted once per job when it starts",
  },
  jobRun: {
    name: "edgerunner_job_run_duration_seconds",
    help: "Time a job ran from in progress to completed (GitHub's started_at to completed_at), counted once per job when it completes",
  },
  runnerStartup: {
    name: "edgerunner_runner_startup_duration_seconds",
    help: "Time from an instance's creation to its runner first reporting idle, counted once per instance",
  },
} as const;

export type HistogramName = (typeof HISTOGRAMS)[keyof typeof HISTOGRAMS]["name"];

/** One observation, ready for its upsert: which histogram, which bucket, and the value in seconds. */
export interface Observation {
  metric: HistogramName;
  bucket: number;
  seconds: number;
}

/** The bucket a duration falls in: the smallest bound at or above it, or OVERFLOW_BUCKET. */
export function bucketFor(seconds: number, bounds: readonly number[] = DURATION_BUCKETS): number {
  for (const le of bounds) if (seconds <= le) return le;
  return OVERFLOW_BUCKET;
}

/**
 * The observation of a duration from `from` to `to` (unix ms). Null when either is unknown;
 * a negative span (clocks that disagree) counts as zero.
 */
export function durationObservation(metric: HistogramName, from: number | null, to: number | null): Observation | null {
  if (from === null || to === null || !Number.isFinite(from) || !Number.isFinite(to)) return null;
  const seconds = Math.max(0, to - from) / 1000;
  return { metric, bucket: bucketFor(seconds), seconds };
}

/**
 * The same bucket choice as a SQL expression over `secondsSql`, for an observation whose
 * duration only D1 knows (an instance's creation time, read in the statement that records it).
 */
export function bucketSql(secondsSql: string, bounds: readonly number[] = DURATION_BUCKETS): string {
  const whens = bounds.map((le) => `WHEN ${secondsSql} <= ${le} THEN ${le}`).join(" ");
  return `CASE ${whens} ELSE ${OVERFLOW_BUCKET} END`;
}

/** A stored row of one histogram series. */
export interface HistogramRow {
  bucket: number;
  count: number;
  sum: number;
}

/** A series as Prometheus shows it: counts at or below each bound (+Inf is `count`), and the sum. */
export interface CumulativeHistogram {
  buckets: { le: number; count: number }[];
  count: number;
  sum: number;
}

/**
 * Adds up a series' rows into cumulative buckets over `bounds`. A row whose bound is not among
 * them counts under the first bound at or above it (or only in +Inf).
 */
export function cumulativeHistogram(rows: readonly HistogramRow[], bounds: readonly number[] = DURATION_BUCKETS): CumulativeHistogram {
  const own = bounds.map(() => 0);
  let count = 0;
  let sum = 0;
  for (const r of rows) {
    count += r.count;
    sum += r.sum;
    if (r.bucket === OVERFLOW_BUCKET) continue;
    const i = bounds.findIndex((le) => r.bucket <= le);
    if (i >= 0) own[i]! += r.count;
  }
  const buckets: { le: number; count: number }[] = [];
  let running = 0;
  bounds.forEach((le, i) => {
    running += own[i]!;
    buckets.push({ le, count: running });
  });
  return { buckets, count, sum };
}

/** The series of one histogram, a cumulative view per scale set, in the order of the rows. */
export function histogramSeries(
  rows: readonly (HistogramRow & { metric: string; scale_set_id: string })[],
  metric: HistogramName,
  bounds: readonly number[] = DURATION_BUCKETS,
): { scaleSetId: string; histogram: CumulativeHistogram }[] {
  const bySet = new Map<string, HistogramRow[]>();
  for (const r of rows) {
    if (r.metric !== metric) continue;
    const own = bySet.get(r.scale_set_id) ?? [];
    own.push(r);
    bySet.set(r.scale_set_id, own);
  }
  return [...bySet].map(([scaleSetId, own]) => ({ scaleSetId, histogram: cumulativeHistogram(own, bounds) }));
}
