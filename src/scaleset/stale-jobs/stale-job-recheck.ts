import { applyJobCorrections } from "../../db/job-store";
import { mapLimit } from "../../lib/map-limit";
import { logEvent as log } from "../../observability/log";
import type { ObjectState } from "../object-state";
import type { RunnerPort } from "../ports";
import { pickStaleJobs, type QueuedJob, type StaleJobPolicy, staleJobVerdict } from "./stale-jobs";

/**
 * The stale-job re-check of a pass (the rules are in stale-jobs.ts): asks GitHub about the
 * oldest queued jobs and moves forward those it has started or finished. Returns how many it
 * moved: each frees demand, so the pass plans again.
 */
export async function recheckStaleJobs(input: {
  db: D1Database;
  scaleSetId: string;
  /** The scale set's oldest queued jobs, from its snapshot. */
  oldest: QueuedJob[];
  github: Pick<RunnerPort, "jobStatus">;
  checks: Pick<ObjectState, "jobChecks" | "recordJobChecks">;
  policy: StaleJobPolicy;
  concurrency: number;
}): Promise<number> {
  const { db, oldest, checks } = input;
  const now = Date.now();
  const picked = pickStaleJobs(oldest, checks.jobChecks(), now, input.policy);
  if (!picked.length) return 0;
  const answers = await mapLimit(picked, input.concurrency, (job) => input.github.jobStatus(job.repository, job.id).catch(() => null));
  const corrections = picked.flatMap((job, index) => {
    const verdict = staleJobVerdict(answers[index]!);
    return verdict ? [{ seq: job.seq, id: job.id, ...verdict }] : [];
  });
  await applyJobCorrections(
    db,
    corrections.map(({ seq, status, conclusion }) => ({ seq, status, conclusion })),
    now,
  );
  checks.recordJobChecks(
    picked.map((job) => job.id),
    now,
    new Set(oldest.map((job) => job.id)),
  );
  for (const correction of corrections)
    log({ event: "stale_job_corrected", scale_set: input.scaleSetId, job_id: correction.id, status: correction.status });
  return corrections.length;
}
