import { PRUNE_TABLES, pruneBatch, type RetentionRun, saveLastRun } from "../db/retention/retention-store";
import { invocationBudget } from "../lib/invocation-cost";
import { logger } from "../observability/log";

/** D1 queries of its invocation a retention run leaves to others (the usage flush after it). */
const RETENTION_MARGIN = 10;

import { afterBatch, nextTarget, runComplete, startRun } from "./batch-plan";
import { type RetentionVar, readRetentionSettings, retentionCutoffs } from "./settings";

/**
 * One retention run (the Worker's Cron Trigger): prunes batch by batch until nothing eligible is
 * left or the query cap is reached, stores its figures for /metrics and logs one
 * `retention_pruned` event. A failing statement ends the run early; what it deleted so far is
 * still recorded, and the next run goes on.
 */
export async function runRetention(
  db: D1Database,
  vars: Partial<Record<RetentionVar, string | undefined>>,
  now: number = Date.now(),
): Promise<RetentionRun> {
  const started = Date.now();
  const read = readRetentionSettings(vars);
  const { warnings } = read;
  // The run's D1 queries stay within the plan's per-invocation limit (50 on the Free plan), with
  // room for the usage the Cron Trigger writes after it.
  const settings = { ...read.settings, maxQueries: Math.min(read.settings.maxQueries, invocationBudget().d1Queries - RETENTION_MARGIN) };
  for (const w of warnings)
    logger.warn({ event: "retention_setting_invalid", setting: w.name, value: w.value, used: w.used, reason: w.reason });
  const cutoffs = retentionCutoffs(now, settings);

  let progress = startRun(PRUNE_TABLES);
  let error: string | null = null;
  for (let table = nextTarget(PRUNE_TABLES, progress, settings); table; table = nextTarget(PRUNE_TABLES, progress, settings)) {
    try {
      const batch = await pruneBatch(db, table, cutoffs, settings.batchSize, now);
      progress = afterBatch(progress, table, batch.deleted, batch.done);
    } catch (err) {
      error = `${table.table}: ${String(err)}`;
      progress = { ...progress, queries: progress.queries + table.queries };
      break;
    }
  }

  const run: RetentionRun = {
    startedAt: now,
    durationMs: Date.now() - started,
    deleted: progress.deleted,
    queries: progress.queries + 1,
    complete: error === null && runComplete(PRUNE_TABLES, progress),
    error,
  };
  try {
    await saveLastRun(db, run);
  } catch (err) {
    error = [error, `saving the figures: ${String(err)}`].filter(Boolean).join("; ");
  }
  const fields = {
    event: "retention_pruned",
    deleted: run.deleted,
    deleted_total: Object.values(run.deleted).reduce((a, b) => a + b, 0),
    queries: run.queries,
    complete: run.complete,
    retention_days: settings.retentionDays,
    delivery_retention_days: settings.deliveryRetentionDays,
    duration_ms: run.durationMs,
  };
  if (error !== null) logger.error({ ...fields, error });
  else logger.info(fields);
  return { ...run, error };
}
