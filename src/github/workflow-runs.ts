import type { components } from "@octokit/openapi-types";
import type { GithubClient } from "./github-client";

/**
 * What the recovery backstop reads of GitHub Actions (src/recovery/backstop.ts): a repository's
 * open workflow runs and their jobs, an organization's most recently pushed repositories, and (on
 * GitHub Enterprise Server, where it lists the instance's) the organizations. Reads only; shapes
 * from GitHub's OpenAPI description.
 */

type WorkflowRun = components["schemas"]["workflow-run"];
export type WorkflowJob = components["schemas"]["job"];

const seg = encodeURIComponent;
const repoPath = (repository: string) => {
  const [owner, name] = repository.split("/") as [string, string];
  return `/repos/${seg(owner)}/${seg(name)}`;
};

/** A run as the backstop needs it: whether its jobs changed since it last looked (updated_at). */
export interface RunSummary {
  id: number;
  status: string | null;
  updatedAt: string;
}

/** The repository's runs in one status, newest first: one page (the backstop looks at open runs, never many). */
export async function listRuns(gh: GithubClient, repository: string, status: string, perPage = 100): Promise<RunSummary[]> {
  const res = await gh.request<{ workflow_runs?: WorkflowRun[] }>("list_workflow_runs", "GET", `${repoPath(repository)}/actions/runs`, {
    query: { status, per_page: perPage },
  });
  return (res.data?.workflow_runs ?? []).map((r) => ({ id: Number(r.id), status: r.status ?? null, updatedAt: r.updated_at }));
}

/** The latest attempt's jobs of a run. */
export async function listRunJobs(gh: GithubClient, repository: string, runId: number): Promise<WorkflowJob[]> {
  const res = await gh.request<{ jobs?: WorkflowJob[] }>("list_run_jobs", "GET", `${repoPath(repository)}/actions/runs/${runId}/jobs`, {
    query: { filter: "latest", per_page: 100 },
  });
  return res.data?.jobs ?? [];
}

/** One job, or null when GitHub does not show it. */
export async function getWorkflowJob(gh: GithubClient, repository: string, jobId: number): Promise<WorkflowJob | null> {
  const res = await gh.request<WorkflowJob>("get_job", "GET", `${repoPath(repository)}/actions/jobs/${jobId}`, { allow: [404] });
  return res.status === 404 ? null : res.data;
}

/** An organization's repositories, most recently pushed first (`owner/name` and when). */
export async function recentOrgRepositories(
  gh: GithubClient,
  org: string,
  perPage: number,
): Promise<{ fullName: string; pushedAt: number }[]> {
  const res = await gh.request<components["schemas"]["minimal-repository"][]>("list_org_repos", "GET", `/orgs/${seg(org)}/repos`, {
    query: { sort: "pushed", direction: "desc", per_page: perPage },
  });
  return (res.data ?? []).map((r) => ({ fullName: r.full_name, pushedAt: r.pushed_at ? Date.parse(r.pushed_at) : 0 }));
}

/** The first page of organizations (on GitHub Enterprise Server: the instance's, which is its enterprise's). */
export async function listOrganizations(gh: GithubClient, perPage = 100): Promise<string[]> {
  const res = await gh.request<components["schemas"]["organization-simple"][]>("list_organizations", "GET", "/organizations", {
    query: { per_page: perPage },
  });
  return (res.data ?? []).map((o) => o.login);
}
