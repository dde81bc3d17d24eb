/**
 * Jobs whose later webhooks were lost (GitHub never redelivers on its own) cost twice: a queued
 * one keeps asking for runners, and a started one whose `completed` never came keeps its
 * machine, billed, until GitHub cancels the job a day later. The scale set object asks GitHub
 * about both, a few per pass, each no more often than `recheckMs`: the oldest queued jobs once
 * they are stale, and first of all the running jobs whose runner GitHub shows idle or no longer
 * has (what an ephemeral runner does once its job is over), which the drift check finds.
 */

export interface StaleJobPolicy {
  /** A queued job older than this is worth asking GitHub about. */
  staleAfterMs: number;
  /** Ask about the same job at most this often. */
  recheckMs: number;
  /** Jobs checked per pass, to stay gentle with GitHub's rate limits. */
  perPass: number;
}

export const DEFAULT_STALE_JOBS: StaleJobPolicy = { staleAfterMs: 10 * 60_000, recheckMs: 5 * 60_000, perPass: 5 };

export interface QueuedJob {
  /** The job's row (jobs.seq): what a correction changes. */
  seq: number;
  /** GitHub's job id: what GitHub is asked about. */
  id: number;
  repository: string;
  queuedAt: number;
}

/**
 * The jobs to ask about this pass: running jobs suspected finished first (each holds a machine),
 * then stale queued ones, oldest first; none asked about within `recheckMs`.
 */
export function pickStaleJobs(
  jobs: readonly QueuedJob[],
  lastChecked: ReadonlyMap<number, number>,
  now: number,
  policy: StaleJobPolicy,
  suspects: readonly QueuedJob[] = [],
): QueuedJob[] {
  const due = (j: QueuedJob) => now - (lastChecked.get(j.id) ?? 0) >= policy.recheckMs;
  const oldestFirst = (a: QueuedJob, b: QueuedJob) => a.queuedAt - b.queuedAt || a.id - b.id;
  const queued = jobs.filter((j) => now - j.queuedAt >= policy.staleAfterMs && due(j)).sort(oldestFirst);
  const running = suspects.filter(due).sort(oldestFirst);
  const seen = new Set<number>();
  return [...running, ...queued].filter((j) => !seen.has(j.id) && seen.add(j.id)).slice(0, policy.perPass);
}

/** What the drift check knows of an instance on a job, and of the runner GitHub lists by its name. */
export interface RunningJobInstance {
  name: string;
  jobSeq: number | null;
  jobId: number | null;
  jobStatus: string | null;
  jobRepository: string | null;
  jobQueuedAt: number | null;
}

/**
 * Running jobs worth asking GitHub about: the instance's runner is listed idle (busy is false) or
 * not listed at all. An ephemeral runner leaves GitHub's list as its job ends, so either means
 * the job is probably over and its `completed` lost; GitHub's answer about the job decides.
 */
export function suspectedFinished(
  instances: readonly RunningJobInstance[],
  runners: readonly { name: string; busy: boolean }[],
): QueuedJob[] {
  const byName = new Map(runners.map((r) => [r.name, r]));
  return instances.flatMap((i) => {
    if (i.jobStatus !== "in_progress" || i.jobSeq === null || i.jobId === null || !i.jobRepository) return [];
    const runner = byName.get(i.name);
    if (runner?.busy) return [];
    return [{ seq: i.jobSeq, id: i.jobId, repository: i.jobRepository, queuedAt: i.jobQueuedAt ?? 0 }];
  });
}

export type StaleJobVerdict = { status: "in_progress" | "completed"; conclusion: string | null } | null;

/** What GitHub's answer means for our row: a newer status, or nothing to change. */
export function staleJobVerdict(github: { status: string; conclusion: string | null } | null): StaleJobVerdict {
  // 404 may just be missing permissions: never conclude anything from it.
  if (!github) return null;
  if (github.status === "completed") return { status: "completed", conclusion: github.conclusion };
  if (github.status === "in_progress") return { status: "in_progress", conclusion: null };
  return null;
}
