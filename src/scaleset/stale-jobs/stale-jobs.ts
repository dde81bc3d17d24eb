/**
 * Queued jobs whose later webhooks were lost keep asking for runners forever (GitHub never
 * redelivers on its own). The scale set object re-checks its oldest queued jobs against
 * GitHub, a few per pass, each no more often than `recheckMs`.
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

export function pickStaleJobs(
  jobs: readonly QueuedJob[],
  lastChecked: ReadonlyMap<number, number>,
  now: number,
  policy: StaleJobPolicy,
): QueuedJob[] {
  return jobs
    .filter((j) => now - j.queuedAt >= policy.staleAfterMs && now - (lastChecked.get(j.id) ?? 0) >= policy.recheckMs)
    .sort((a, b) => a.queuedAt - b.queuedAt || a.id - b.id)
    .slice(0, policy.perPass);
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
