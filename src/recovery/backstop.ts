import type { JobStatus } from "../db/jobs/schema";
import { statusRank } from "../intake/job-event";

/**
 * The backstop: for an entity whose deliveries cannot be read back (an enterprise's hook, a
 * Gitea, a hook its credentials may not read), the coordinator asks the forge for the open jobs
 * of the entity's recently active repositories and compares them with the jobs it holds. Plain
 * functions over what the forge listed and what D1 holds; recovery-backstop.ts makes the calls.
 *
 * Each pass looks at a few repositories in turn, so the calls stay bounded however many the
 * entity has. What it finds goes through intake like a delivery would have: a job the forge
 * holds open and we do not is taken in; a held job the forge shows further along is moved on; a
 * held job of a repository looked at that no longer shows among the open ones is asked about one
 * by one (its run finished, or it was cancelled), a few per pass.
 */

/** A job as the forge lists it (GitHub's workflow job, Gitea's ActionWorkflowJob), in our terms. */
export interface ForgeJob {
  id: number;
  runId: number;
  runAttempt: number;
  name: string;
  workflowName: string | null;
  repository: string;
  labels: string[];
  status: string;
  conclusion: string | null;
  runnerId: number | null;
  runnerName: string | null;
  createdAt: string | null;
  startedAt: string | null;
  completedAt: string | null;
}

/** A job row of the entity that is not completed. */
export interface HeldJob {
  id: number;
  runId: number;
  repository: string;
  status: JobStatus;
  /** When the row was made: a row younger than the listing may simply be missing from it. */
  createdAt: number;
}

/** What one repository's listing says: its open jobs, and the runs that are open (some maybe not listed again, unchanged). */
export interface RepoListing {
  repository: string;
  jobs: ForgeJob[];
  openRuns: ReadonlySet<number>;
}

export interface BackstopPolicy {
  /** Repositories looked at per pass. */
  reposPerPass: number;
  /** Held jobs missing from the listings asked about one by one, per pass. */
  confirmsPerPass: number;
  /** A held row younger than this before the pass is not asked about: the listing may predate it. */
  settleMs: number;
}

export const DEFAULT_BACKSTOP: BackstopPolicy = { reposPerPass: 5, confirmsPerPass: 10, settleMs: 60_000 };

const OPEN = new Set(["queued", "waiting", "in_progress"]);
const lc = (s: string) => s.toLowerCase();

/** The forge's status in ours, or null for one we do not track (requested, pending: not yet a job a runner could take). */
export function statusOf(job: Pick<ForgeJob, "status">): JobStatus | null {
  if (job.status === "completed" || job.status === "in_progress" || job.status === "queued" || job.status === "waiting") return job.status;
  return null;
}

/** Which repositories this pass looks at: `perPass` of them from `next` on, round and round. */
export function reposThisPass(repos: readonly string[], next: number, perPass: number): { repos: string[]; next: number } {
  if (repos.length === 0) return { repos: [], next: 0 };
  const start = next % repos.length;
  const count = Math.min(perPass, repos.length);
  const out: string[] = [];
  for (let i = 0; i < count; i++) out.push(repos[(start + i) % repos.length]!);
  return { repos: out, next: (start + count) % repos.length };
}

export interface BackstopPlan {
  /** Forge jobs to take in: new ones, and held ones the forge shows further along. */
  take: ForgeJob[];
  /** Held jobs to ask the forge about (missing from the open listings). */
  confirm: HeldJob[];
}

export function planBackstop(
  listings: readonly RepoListing[],
  held: readonly HeldJob[],
  passStart: number,
  policy: BackstopPolicy,
): BackstopPlan {
  const heldById = new Map(held.map((h) => [h.id, h]));
  const take: ForgeJob[] = [];
  const listedIds = new Set<number>();
  for (const listing of listings) {
    for (const job of listing.jobs) {
      listedIds.add(job.id);
      const status = statusOf(job);
      if (!status || !OPEN.has(status)) continue;
      const mine = heldById.get(job.id);
      if (!mine || statusRank[status] > statusRank[mine.status]) take.push(job);
    }
  }
  const looked = new Map(listings.map((l) => [lc(l.repository), l]));
  const confirm = held
    .filter((h) => {
      const listing = looked.get(lc(h.repository));
      if (!listing || listedIds.has(h.id) || listing.openRuns.has(h.runId)) return false;
      return h.createdAt <= passStart - policy.settleMs;
    })
    .sort((a, b) => a.createdAt - b.createdAt || a.id - b.id)
    .slice(0, policy.confirmsPerPass);
  return { take, confirm };
}

/**
 * The job as a workflow_job payload (the fields intake reads), so what the backstop finds goes
 * through the same parse, routing and merge as a delivery.
 */
export function asPayload(job: ForgeJob): Record<string, unknown> {
  const [owner, name] = job.repository.split("/") as [string, string];
  return {
    action: job.status,
    workflow_job: {
      id: job.id,
      run_id: job.runId,
      run_attempt: job.runAttempt,
      name: job.name,
      workflow_name: job.workflowName,
      status: job.status,
      conclusion: job.conclusion,
      labels: job.labels,
      runner_id: job.runnerId,
      runner_name: job.runnerName,
      created_at: job.createdAt,
      started_at: job.startedAt,
      completed_at: job.completedAt,
    },
    repository: { name, owner: { login: owner } },
  };
}

/** The id a backstop finding is recorded under: one per job and status, so each move is taken in once. */
export const backstopDeliveryId = (endpoint: string, job: Pick<ForgeJob, "id" | "status">) =>
  `backstop:${endpoint}:${job.id}:${job.status}`;
