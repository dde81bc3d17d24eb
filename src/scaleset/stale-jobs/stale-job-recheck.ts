import { applyJobCorrections } from "../../db/jobs/job-store";
import { mapLimit } from "../../lib/map-limit";
import { logEvent as log } from "../../observability/log";
import type { ObjectState } from "../object/object-state";
import type { RunnerPort } from "../ports";
import { pickStaleJobs, type QueuedJob, type StaleJobPolicy, staleJobVerdict } from "./stale-jobs";

/**
 * The stale-job re-check of a pass (the rules are in stale-jobs.ts): asks GitHub about running
 * jobs suspected finished and the oldest queued jobs, and moves forward those it has started or
 * finished. Returns how many it moved: each frees demand or a machine, so the pass plans again.
 */
export async function recheckStaleJobs(input: {
  db: D1Database;
  scaleSetId: string;
  /** The scale set's oldest queued jobs, from its snapshot. */
  oldest: QueuedJob[];
  /** Running jobs whose runner GitHub shows idle or no longer has (the drift check's finding). */
  suspects?: QueuedJob[];
  github: Pick<RunnerPort, "jobStatus">;
  checks: Pick<ObjectState, "jobChecks" | "recordJobChecks">;
  policy: StaleJobPolicy;
  concurrency: number;
}): Promise<number> {
  const { db, oldest, checks } = input;
  const now = Date.now();
  const suspects = input.suspects ?? [];
  const picked = pickStaleJobs(oldest, checks.jobChecks(), now, input.policy, suspects);
  if (!picked.length) return 0;
  const answers = await mapLimit(picked, input.concurrency, (job) => input.github.jobStatus(job.repository, job.id).catch(() => null));
  const suspected = new Set(suspects.map((job) => job.id));
  const corrections = picked.flatMap((job, index) => {
    const verdict = staleJobVerdict(answers[index]!);
    // A running job that GitHub says is still running is as we had it.
    if (!verdict || (suspected.has(job.id) && verdict.status !== "completed")) return [];
    return [{ seq: job.seq, id: job.id, ...verdict }];
  });
  await applyJobCorrections(
    db,
    corrections.map(({ seq, status, conclusion }) => ({ seq, status, conclusion })),
    now,
  );
  checks.recordJobChecks(
    picked.map((job) => job.id),
    now,
    new Set([...oldest, ...suspects].map((job) => job.id)),
  );
  for (const correction of corrections)
    log({
      event: "stale_job_corrected",
      scale_set: input.scaleSetId,
      job_id: correction.id,
      status: correction.status,
      // A running job whose runner had left: its `completed` was lost, and its machine now goes.
      ...(suspected.has(correction.id) && { was: "in_progress", why: "runner idle or gone at GitHub" }),
    });
  return corrections.length;
}
