import type { JobStatus } from "../db/jobs/schema";

/** A job as its delivery left it: its status, its scale set, and the scale set of our instance running it, if any. */
export interface RecordedJob {
  status: JobStatus;
  scaleSetId: string | null;
  instanceScaleSetId: string | null;
}

/**
 * The scale sets whose objects should reconcile now that a delivery is stored. A job going
 * in_progress asks nothing of its own scale set (its demand only shrank), but a runner of
 * another scale set taking it leaves that scale set one runner short: that one is woken.
 */
export function nudgeTargets(job: RecordedJob): string[] {
  const jobSet = job.status === "in_progress" ? null : job.scaleSetId;
  const runnerSet = job.instanceScaleSetId !== job.scaleSetId || jobSet ? job.instanceScaleSetId : null;
  return [...new Set([jobSet, runnerSet].filter((s): s is string => s !== null))];
}
