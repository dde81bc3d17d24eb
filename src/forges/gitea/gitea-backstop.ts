import type { GithubClient } from "../../github/github-client";
import type { ForgeJob } from "../../recovery/backstop";
import type { BackstopPort } from "../../recovery/backstop-port";
import type { CallBudget } from "../../recovery/watch-status";

/**
 * The recovery backstop's calls on Gitea (src/recovery/backstop.ts). Gitea delivers each webhook
 * once and shows its record of deliveries only in its web UI, so a lost delivery is found by
 * asking for a repository's jobs in the statuses a runner may still take: its Actions API lists
 * them by status (`GET /repos/{owner}/{repo}/actions/jobs`, ListWorkflowJobs, Gitea 1.25 or later;
 * on 1.24 the backstop's watch says not_found), the jobs of a repository in one list with no runs
 * to go through. An organization's repositories come from `GET /orgs/{org}/repos`, those updated
 * lately first.
 */

/** Gitea's `ActionWorkflowJob` (modules/structs/repo_actions.go), the fields read here. */
interface GiteaWorkflowJob {
  id: number;
  run_id: number;
  run_attempt?: number;
  name?: string;
  workflow_name?: string;
  labels?: string[] | null;
  status: string;
  conclusion?: string | null;
  runner_id?: number | null;
  runner_name?: string | null;
  created_at?: string | null;
  started_at?: string | null;
  completed_at?: string | null;
}

/** Gitea's statuses of a job a runner may still take, or is running. */
const OPEN_STATUSES = ["waiting", "queued", "in_progress"];
const PAGE_LIMIT = 50;
/** Gitea writes "0001-01-01T00:00:00Z" for a time a job has not reached. */
const time = (t: string | null | undefined) => (t && !t.startsWith("0001-") ? t : null);
const seg = encodeURIComponent;

function giteaJob(j: GiteaWorkflowJob, repository: string): ForgeJob {
  return {
    id: j.id,
    runId: j.run_id,
    runAttempt: j.run_attempt || 1,
    name: j.name ?? "",
    workflowName: j.workflow_name || null,
    repository,
    labels: j.labels ?? [],
    status: j.status,
    conclusion: j.conclusion || null,
    runnerId: j.runner_id || null,
    runnerName: j.runner_name || null,
    createdAt: time(j.created_at),
    startedAt: time(j.started_at),
    completedAt: time(j.completed_at),
  };
}

const repoPath = (repository: string) => {
  const [owner, name] = repository.split("/") as [string, string];
  return `/repos/${seg(owner)}/${seg(name)}`;
};

export function giteaBackstopPort(gh: GithubClient, budget: CallBudget, credentialId: string): BackstopPort {
  const call = <T>(fn: () => Promise<T>) => {
    budget.take(credentialId);
    return fn();
  };
  return {
    async orgRepositories(org, activeSince, limit) {
      const res = await call(() =>
        gh.request<{ full_name: string; updated_at?: string }[]>("list_org_repos", "GET", `/orgs/${seg(org)}/repos`, {
          query: { page: 1, limit: Math.min(limit, PAGE_LIMIT) },
        }),
      );
      return (res.data ?? [])
        .map((r) => ({ name: r.full_name, at: r.updated_at ? Date.parse(r.updated_at) : 0 }))
        .filter((r) => r.at >= activeSince)
        .sort((a, b) => b.at - a.at)
        .map((r) => r.name);
    },
    // Gitea has no list of an instance's organizations a token of an admin may not also use for
    // more; the organizations registered here and those jobs came from are what the backstop goes round.
    organizations: async () => [],
    async openJobs(repository) {
      const jobs: ForgeJob[] = [];
      let full = false;
      for (const status of OPEN_STATUSES) {
        const res = await call(() =>
          gh.request<{ jobs?: GiteaWorkflowJob[] | null; workflow_jobs?: GiteaWorkflowJob[] | null }>(
            "list_jobs",
            "GET",
            `${repoPath(repository)}/actions/jobs`,
            { query: { status, page: 1, limit: PAGE_LIMIT } },
          ),
        );
        // `jobs` in Gitea's answer; the struct's first version called the list `workflow_jobs`.
        const page = res.data?.jobs ?? res.data?.workflow_jobs ?? [];
        full ||= page.length >= PAGE_LIMIT;
        jobs.push(...page.map((j) => giteaJob(j, repository)));
      }
      // Every open job is listed, so a held job missing from the list is asked about; unless a page
      // was full (more may follow), when only jobs of runs seen open are taken for open.
      return { listing: { repository, jobs, openRuns: new Set(full ? jobs.map((j) => j.runId) : []) }, runs: {} };
    },
    async job(repository, id) {
      const res = await call(() =>
        gh.request<GiteaWorkflowJob>("get_job", "GET", `${repoPath(repository)}/actions/jobs/${id}`, { allow: [404] }),
      );
      return res.status === 404 ? null : giteaJob(res.data, repository);
    },
  };
}
