import type { PlanSummary } from "../reconcile";

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

/** Whether every count of a sample is zero: a scale set with no runners and min idle 0. */
export const isZeroSample = (s: RunnerSample): boolean => !s.idle && !s.busy && !s.booting && !s.other && !s.minIdle;

/**
 * Whether a sample is to be written, given the last one this isolate wrote for its scale set:
 * once per slot, but a zero sample after a zero sample not at all. The chart draws a slot
 * without a sample as zero, and each sample is a row written: an idle scale set wrote 288 a day.
 */
export function sampleDue(sample: RunnerSample | null, last: { at: number | null; zero: boolean }): sample is RunnerSample {
  return sample !== null && sample.at !== last.at && !(isZeroSample(sample) && last.zero);
}
