import type { GithubClient } from "../github/github-client";
import { getWorkflowJob, listOrganizations, listRunJobs, listRuns, recentOrgRepositories, type WorkflowJob } from "../github/workflow-runs";
import type { ForgeJob, RepoListing } from "./backstop";
import type { CallBudget } from "./watch-status";

/**
 * What the backstop asks a forge (recovery-backstop.ts), one implementation per forge: GitHub's
 * here, Gitea's in src/forges/gitea/gitea-backstop.ts. Every call is counted against the
 * credential's share of the pass (CallBudget) before it is made.
 */
export interface BackstopPort {
  /** Repositories with recent activity under an organization (most recent first), at most `limit`. */
  orgRepositories(org: string, activeSince: number, limit: number): Promise<string[]>;
  /** The organizations the forge lists for an enterprise or instance, when it has such a list; [] otherwise. */
  organizations(): Promise<string[]>;
  /**
   * A repository's open jobs. `knownRuns` (run id → its mark, status and updated_at, when last listed) lets a port
   * skip listing again the jobs of a run that has not changed; it answers the runs it saw.
   */
  openJobs(
    repository: string,
    knownRuns: Readonly<Record<string, string>>,
  ): Promise<{ listing: RepoListing; runs: Record<string, string> }>;
  /** One job, or null when the forge does not show it. */
  job(repository: string, id: number): Promise<ForgeJob | null>;
}

/** GitHub's runs in these statuses have jobs a runner may still take (or is running). */
const OPEN_RUN_STATUSES = ["queued", "in_progress", "waiting"];
/** Runs whose jobs one listing reads at most (the others wait for the next pass). */
const RUNS_LISTED_PER_REPO = 30;

export function githubJob(j: WorkflowJob, repository: string): ForgeJob {
  return {
    id: Number(j.id),
    runId: Number(j.run_id),
    runAttempt: j.run_attempt ?? 1,
    name: j.name,
    workflowName: j.workflow_name ?? null,
    repository,
    labels: j.labels ?? [],
    status: j.status,
    conclusion: j.conclusion ?? null,
    runnerId: j.runner_id ?? null,
    runnerName: j.runner_name ?? null,
    createdAt: j.created_at ?? null,
    startedAt: j.started_at ?? null,
    completedAt: j.completed_at ?? null,
  };
}

/**
 * GitHub's side. `enterpriseServer`: the endpoint is a GitHub Enterprise Server, whose
 * `GET /organizations` lists the instance's organizations (on github.com it lists every
 * organization there is, so it is never asked).
 */
export function githubBackstopPort(gh: GithubClient, budget: CallBudget, credentialId: string, enterpriseServer: boolean): BackstopPort {
  const call = <T>(fn: () => Promise<T>) => {
    budget.take(credentialId);
    return fn();
  };
  return {
    async orgRepositories(org, activeSince, limit) {
      const repos = await call(() => recentOrgRepositories(gh, org, limit));
      return repos.filter((r) => r.pushedAt >= activeSince).map((r) => r.fullName);
    },
    async organizations() {
      return enterpriseServer ? call(() => listOrganizations(gh)) : [];
    },
    async openJobs(repository, knownRuns) {
      const runs = (await Promise.all(OPEN_RUN_STATUSES.map((s) => call(() => listRuns(gh, repository, s))))).flat();
      const openRuns = new Set(runs.map((r) => r.id));
      // A run whose status and updated_at are as when its jobs were last listed has the same jobs.
      const mark = (r: { status: string | null; updatedAt: string }) => `${r.status}|${r.updatedAt}`;
      const changed = runs.filter((r) => knownRuns[String(r.id)] !== mark(r)).slice(0, RUNS_LISTED_PER_REPO);
      const jobs: ForgeJob[] = [];
      const seen: Record<string, string> = {};
      for (const r of runs) if (knownRuns[String(r.id)] === mark(r)) seen[String(r.id)] = mark(r);
      for (const run of changed) {
        const listed = await call(() => listRunJobs(gh, repository, run.id));
        jobs.push(...listed.map((j) => githubJob(j, repository)));
        seen[String(run.id)] = mark(run);
      }
      return { listing: { repository, jobs, openRuns }, runs: seen };
    },
    async job(repository, id) {
      const j = await call(() => getWorkflowJob(gh, repository, id));
      return j && githubJob(j, repository);
    },
  };
}
