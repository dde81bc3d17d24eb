import { sampleStatement } from "../../db/metrics/scaleset-sample-store";
import { logAt } from "../../observability/log";
import {
  BUSY_FLUSH_MS,
  counterName,
  countersFlushedAt,
  countReconcile,
  flushCounters,
  hasPendingCounts,
  setCounterStatement,
  USAGE_FLUSH_MS,
  usageFlushDue,
} from "../../observability/op-counters";

/**
 * When each scale set last wrote its counts, desired count and sample, per isolate rather than
 * per object: an idle object is evicted between its ticks (hibernation), and a record kept in
 * the object would make every tick after a wake-up write them all again. Lost with the isolate,
 * which costs one write each.
 */
interface Written {
  countersFlushedAt: number;
  desired: number | null;
  /** The slot of the last sample written. */
  sampledAt: number | null;
  /** Whether that sample was all zeros (see `finish`). */
  sampledZero: boolean;
}
const writtenBySet = new Map<string, Written>();

import { passLevel } from "../log-levels";
import type { ObjectState } from "../object/object-state";
import type { Action, PlanSummary } from "../reconcile";
import { isZeroSample, runnerSample, sampleDue } from "../runner/runner-sample";

/**
 * What one reconcile run did, pass by pass, and how it is reported: the scale set's last
 * reconcile (its status), the `reconciled` log line, and the /metrics counters, which go to D1
 * at the end of a run that called out or changed the desired count at most every 30 s, else
 * when the isolate has not written its counts for 15 minutes (USAGE_FLUSH_MS);
 * with them, the first run of each 5-minute slot writes the runners-by-state sample
 * (runner/runner-sample.ts), but for a scale set whose sample stays all zeros.
 */
export class RunRecord {
  /** Totals of the run under way (one run is up to a few passes). */
  private run: {
    at: number;
    started: number;
    actions: Record<string, number>;
    trips: number;
    statements: number;
    subrequests: number;
    fetches: number;
    passes: number;
    error: string | null;
    /** The min idle the last pass planned with (its sample's line). */
    minIdle: number;
  } | null = null;
  /** What this scale set last wrote, kept for the isolate (see `written`). */
  private get written(): Written {
    const id = this.state.scaleSetId ?? "";
    const w = writtenBySet.get(id) ?? { countersFlushedAt: 0, desired: null, sampledAt: null, sampledZero: false };
    writtenBySet.set(id, w);
    return w;
  }

  constructor(
    private readonly db: D1Database,
    private readonly state: ObjectState,
  ) {}

  /** Adds a pass to the run under way, and keeps the run so far as the scale set's last reconcile. */
  addPass(pass: {
    started: number;
    at: number;
    actions: readonly Action[];
    trips: number;
    statements: number;
    subrequests: number;
    fetches: number;
    error: string | null;
    summary: PlanSummary;
    minIdle: number;
  }): void {
    const run: NonNullable<RunRecord["run"]> = this.run ?? {
      at: pass.at,
      started: pass.started,
      actions: {},
      trips: 0,
      statements: 0,
      subrequests: 0,
      fetches: 0,
      passes: 0,
      error: null,
      minIdle: pass.minIdle,
    };
    for (const a of pass.actions) run.actions[a.type] = (run.actions[a.type] ?? 0) + (a.type === "create" ? a.count : 1);
    run.trips += pass.trips;
    run.statements += pass.statements;
    run.subrequests += pass.subrequests;
    run.fetches += pass.fetches;
    run.passes++;
    run.error = run.error ?? pass.error;
    run.minIdle = pass.minIdle;
    this.run = run;
    this.state.lastReconcile = {
      at: run.at,
      durationMs: Date.now() - run.started,
      summary: pass.summary,
      actions: run.actions,
      error: run.error,
      d1RoundTrips: run.trips,
      d1Queries: run.statements,
      subrequests: run.subrequests,
      fetches: run.fetches,
      passes: run.passes,
    };
  }

  /** Logs the run and records it for /metrics, batching the counter writes (see observability/op-counters.ts). */
  async finish(): Promise<void> {
    const scaleSetId = this.state.scaleSetId;
    const last = this.state.lastReconcile;
    if (!scaleSetId || !this.run || !last) return;
    // A run that did nothing is debug: an idle scale set's every tick would otherwise write a line.
    logAt(passLevel({ actions: Object.keys(last.actions ?? {}).length, blocked: last.summary?.blocked, error: last.error }), {
      event: "reconciled",
      scale_set: scaleSetId,
      duration_ms: last.durationMs,
      d1_round_trips: last.d1RoundTrips,
      d1_queries: last.d1Queries,
      subrequests: last.subrequests,
      fetches: last.fetches,
      passes: last.passes,
      actions: last.actions,
      ...(last.error !== null && { error: last.error }),
    });
    countReconcile(scaleSetId, last.durationMs);
    const desired = last.summary?.desired ?? null;
    const now = Date.now();
    const written = this.written;
    const desiredChanged = desired !== null && desired !== written.desired;
    const sample = last.summary ? runnerSample(last.summary, this.run.minIdle, now) : null;
    const due = sampleDue(sample, { at: written.sampledAt, zero: written.sampledZero });
    // Each counter a flush carries is a billed row written: a run that called out or moved its
    // desired count writes at most every 30 s, an idle one with the isolate's (or with its sample).
    const since = now - written.countersFlushedAt;
    // This run's own calls: others' (delivery recovery, another object) are theirs to write. A
    // scale set with no machines calls out only for its orphan check: its counts can wait.
    const acted = Object.keys(last.actions ?? {}).length > 0;
    const busy = desiredChanged || acted || (this.run.fetches > 0 && (last.summary?.live ?? 0) > 0);
    // An idle run waits for the isolate's own cadence, not its scale set's: every flush takes
    // every scale set's counts, so ten idle scale sets flushing on their own clocks wrote ten
    // times as many rows.
    const idleDue = hasPendingCounts() && now - countersFlushedAt() >= USAGE_FLUSH_MS;
    if (!due && !usageFlushDue(now) && !(busy && since >= BUSY_FLUSH_MS) && !idleDue) return;
    written.countersFlushedAt = now;
    await flushCounters(this.db, [
      ...(desiredChanged ? [setCounterStatement(this.db, counterName("scaleset.desired", scaleSetId), desired!, now)] : []),
      ...(due ? [sampleStatement(this.db, scaleSetId, sample)] : []),
    ]);
    if (desiredChanged) written.desired = desired;
    if (due) [written.sampledAt, written.sampledZero] = [sample.at, isZeroSample(sample)];
  }

  /** The run is over (finished or failed): the next pass starts a new one. */
  end(): void {
    this.run = null;
  }
}
