import type { JobStatus } from "../db/jobs/schema";
import { durationObservation, HISTOGRAMS, type Observation } from "../observability/histograms";
import type { JobEvent } from "./job-event";

/**
 * What one job event adds to the queue-time and run-time histograms, and on which move of the
 * job's status. Pure; db/jobs/delivery-store.ts records each observation in the delivery's own batch,
 * only when the event moves the job's row past `status` (from below it, or from no row), so a
 * redelivery, a second hook's copy or an event arriving after a further-along one counts nothing.
 *
 * Only GitHub's own timestamps are used: a job the stale-job re-check moved forward (its
 * webhooks were lost) has none and is not counted. A job that never had a runner (cancelled
 * while queued: GitHub still fills `started_at`) waited for nothing and ran nothing: not counted.
 */
export interface JobObservation extends Observation {
  /** The status whose reaching counts it: the row must have been below it. */
  status: JobStatus;
}

export function jobObservations(job: Pick<JobEvent, "status" | "runnerName" | "queuedAt" | "startedAt" | "completedAt">): JobObservation[] {
  if (job.runnerName === null || (job.status !== "in_progress" && job.status !== "completed")) return [];
  const out: JobObservation[] = [];
  const queue = durationObservation(HISTOGRAMS.jobQueue.name, job.queuedAt, job.startedAt);
  if (queue) out.push({ ...queue, status: "in_progress" });
  if (job.status === "completed") {
    const run = durationObservation(HISTOGRAMS.jobRun.name, job.startedAt, job.completedAt);
    if (run) out.push({ ...run, status: "completed" });
  }
  return out;
}
