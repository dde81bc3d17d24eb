import type { PlanSummary } from "./reconcile";

/**
 * What a scale set's runners were doing, once per slot of SAMPLE_SLOT_MS: the dashboard's
 * "runners by state" chart (`scale_set_samples`). Pure; the object writes a sample with the
 * first run of each slot (executor/run-record.ts), so at most one statement per slot.
 */

export const SAMPLE_SLOT_MS = 5 * 60_000;

export interface RunnerSample {
  /** The start of the slot (unix ms). */
  at: number;
  idle: number;
  busy: number;
  /** Being created, booting or registering: on their way to idle. */
  booting: number;
  /** Everything else not yet deleted: being deleted, in error, stopped. */
  other: number;
  /** The min idle the planner worked to: the schedule's when one applies. */
  minIdle: number;
}

export const sampleSlot = (now: number): number => Math.floor(now / SAMPLE_SLOT_MS) * SAMPLE_SLOT_MS;

/**
 * A sample from a pass's plan summary. The planner's `available` runners are idle or on their
 * way there, busy ones are apart from them, and both are among the live ones; what is left of
 * the live ones is `other`.
 */
export function runnerSample(
  summary: Pick<PlanSummary, "live" | "available" | "idle" | "busy">,
  minIdle: number,
  now: number,
): RunnerSample {
  const booting = Math.max(0, summary.available - summary.idle);
  return {
    at: sampleSlot(now),
    idle: summary.idle,
    busy: summary.busy,
    booting,
    other: Math.max(0, summary.live - summary.idle - summary.busy - booting),
    minIdle,
  };
}
