import type { GithubClient } from "../../github/github-client";
import { type GiteaScope, giteaScopePath } from "./gitea-scope";

/**
 * Gitea's Actions runner API (1.24 or later), over the same transport as GitHub's (GithubClient:
 * the credential's token bound to its API URL, rate-limit waits, retries, our error classes).
 * Shapes as Gitea's swagger describes them (modules/structs: ActionRunner, ActionRunnersResponse,
 * ActionWorkflowJob); the contract test checks the fake against a trimmed copy of it.
 */

/** A runner as Gitea lists it (`ActionRunner`). */
export interface GiteaRunner {
  id: number;
  name: string;
  /** online, offline, idle, active … as Gitea reports it. */
  status: string;
  busy: boolean;
  ephemeral?: boolean;
  labels?: { id?: number; name: string; type?: string }[] | null;
}

interface RunnersPage {
  runners?: GiteaRunner[] | null;
  total_count?: number;
}

/** Gitea pages with `page` and `limit` (its maximum page size is 50 by default). */
const PAGE_SIZE = 50;
/** Enough for 10,000 runners; a longer list means something is wrong, not that we should read on. */
const MAX_PAGES = 200;

/** Every runner registered at the scope (all pages). */
export async function listGiteaRunners(gh: GithubClient, scope: GiteaScope): Promise<GiteaRunner[]> {
  const all: GiteaRunner[] = [];
  for (let page = 1; page <= MAX_PAGES; page++) {
    const res = await gh.request<RunnersPage>("list_runners", "GET", `${giteaScopePath(scope)}/actions/runners`, {
      query: { page, limit: PAGE_SIZE },
    });
    const runners = res.data?.runners ?? [];
    all.push(...runners);
    const total = res.data?.total_count;
    if (runners.length < PAGE_SIZE || (total !== undefined && all.length >= total)) break;
  }
  return all;
}

/** One runner by id; null when Gitea does not know it (404). */
export async function getGiteaRunner(gh: GithubClient, scope: GiteaScope, runnerId: number): Promise<GiteaRunner | null> {
  const res = await gh.request<GiteaRunner>("get_runner", "GET", `${giteaScopePath(scope)}/actions/runners/${runnerId}`, { allow: [404] });
  return res.status === 404 ? null : res.data;
}

/**
 * Removes a runner. Gitea answers 404 for a runner it does not know, and some versions 500
 * (GARM works around the same): after a 500 the runner is looked up, and one Gitea no longer
 * has counts as gone; one it still has is a real failure.
 */
export async function deleteGiteaRunner(gh: GithubClient, scope: GiteaScope, runnerId: number): Promise<"deleted" | "gone"> {
  const path = `${giteaScopePath(scope)}/actions/runners/${runnerId}`;
  const res = await gh.request<{ message?: string } | null>("delete_runner", "DELETE", path, { allow: [404, 500] });
  if (res.status === 404) return "gone";
  if (res.status === 500) {
    if ((await getGiteaRunner(gh, scope, runnerId)) === null) return "gone";
    throw new Error(`delete_runner: Gitea answered 500 for runner ${runnerId}, which it still lists: ${res.data?.message ?? "no message"}`);
  }
  return "deleted";
}

/** A registration token for `act_runner register` (POST since Gitea 1.24; the older GET is deprecated). */
export async function createGiteaRegistrationToken(gh: GithubClient, scope: GiteaScope): Promise<string> {
  const res = await gh.request<{ token: string }>(
    "create_registration_token",
    "POST",
    `${giteaScopePath(scope)}/actions/runners/registration-token`,
  );
  return res.data.token;
}

/** A workflow job's status (`ActionWorkflowJob`), or null when Gitea does not show it (404). */
export async function getGiteaJob(
  gh: GithubClient,
  repo: { owner: string; repo: string },
  jobId: number,
): Promise<{ status: string; conclusion: string | null } | null> {
  const res = await gh.request<{ status: string; conclusion?: string | null }>(
    "get_job",
    "GET",
    `/repos/${encodeURIComponent(repo.owner)}/${encodeURIComponent(repo.repo)}/actions/jobs/${jobId}`,
    { allow: [404] },
  );
  if (res.status === 404) return null;
  return { status: res.data.status, conclusion: res.data.conclusion || null };
}
