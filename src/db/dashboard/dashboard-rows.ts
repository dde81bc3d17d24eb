// What the dashboard's page reads share: the row helpers, how an entity is named, and the
// 24-hour charts' reads (queue waits, runner samples) the overview and a scale set's page both draw.
import type { RunnerSample } from "../../scaleset/runner/runner-sample";
import type { QueueWait } from "../../ui/charts/queue-percentiles";

export const rows = <T>(r: D1Result | undefined) => (r?.results ?? []) as T[];
export const parsedLabels = (json: string | null): string[] => JSON.parse(json ?? "[]") as string[];

/** An entity as the dashboard names it: `owner` or `owner/name`. */
export const ENTITY_NAME = `e.owner || CASE WHEN e.name = '' THEN '' ELSE '/' || e.name END`;

/** How far back the charts look. */
export const CHART_WINDOW_MS = 24 * 3_600_000;
/** At most this many started jobs are read for a queue time chart (a sample of them, beyond). */
export const MAX_CHART_JOBS = 10_000;

/**
 * The waits of one scale set's jobs (`?2`) that started since `?1`, by GitHub's times and only
 * those a runner took (a job cancelled while queued has a start time but waited for nothing),
 * through its (scale_set_id, status) index.
 */
export const QUEUE_WAITS = `SELECT started_at, started_at - queued_at AS wait_ms FROM jobs
  WHERE scale_set_id = ?2 AND status IN ('in_progress', 'completed') AND started_at >= ?1
    AND queued_at IS NOT NULL AND runner_name IS NOT NULL
  LIMIT ${MAX_CHART_JOBS}`;

/**
 * The same for every scale set, newest first: jobs have no index on status alone (each index is
 * a row written per job change, migration 0029), and the newest rows are the ones that started
 * lately, so the walk back from the newest stops at the chart's limit or where the table ends.
 */
export const QUEUE_WAITS_ALL = `SELECT started_at, started_at - queued_at AS wait_ms FROM jobs
  WHERE status IN ('in_progress', 'completed') AND started_at >= ?1
    AND queued_at IS NOT NULL AND runner_name IS NOT NULL AND scale_set_id IS NOT NULL
  ORDER BY seq DESC LIMIT ${MAX_CHART_JOBS}`;

export const SAMPLE_COLUMNS =
  "at, SUM(idle) AS idle, SUM(busy) AS busy, SUM(booting) AS booting, SUM(other) AS other, SUM(min_idle) AS min_idle";

export const queueWaits = (r: D1Result | undefined): QueueWait[] =>
  rows<{ started_at: number; wait_ms: number }>(r).map((w) => ({ startedAt: w.started_at, waitMs: w.wait_ms }));
export const samples = (r: D1Result | undefined): RunnerSample[] =>
  rows<Omit<RunnerSample, "minIdle"> & { min_idle: number }>(r).map(({ min_idle, ...s }) => ({ ...s, minIdle: min_idle }));
