import type { components } from "@octokit/openapi-types";
import { cachedFetch } from "./cache";
import { GithubApiError, GithubError } from "./errors";
import type { GithubClient } from "./github-client";
import { type GithubScope, scopeKey, scopePath } from "./scope";

// GitHub's own shapes come from its OpenAPI description (@octokit/openapi-types, types only),
// the same description the fake GitHub is checked against (test/contract).
type Schemas = components["schemas"];

/** A self-hosted runner as GitHub lists it. */
export type GithubRunner = Schemas["runner"];

/** A runner group as far as we keep it (the cache holds these three fields). */
export type RunnerGroup = Pick<Schemas["runner-groups-org"], "id" | "name" | "default">;

/** Where to download the runner for one OS and architecture. */
export type RunnerDownload = Schemas["runner-application"];

type JitConfigResponse = components["responses"]["actions_runner_jitconfig"]["content"]["application/json"];

export interface JitConfig {
  runner: GithubRunner;
  /** Secret: the runner's credentials. Hand it to the instance, never log or store it in clear. */
  encodedJitConfig: string;
}

export interface RegistrationToken {
  token: string;
  expiresAt: string;
}

export type DeleteRunnerResult =
  /** Removed now. */
  | { outcome: "deleted" }
  /** GitHub does not know it (any more): as good as deleted. */
  | { outcome: "already_gone" }
  /** The runner is running a job; GitHub refuses until it finishes. Try again later. */
  | { outcome: "busy"; message: string };

export interface JobStatus {
  id: number;
  run_id: number;
  status: string;
  conclusion: string | null;
  runner_id: number | null;
  runner_name: string | null;
  labels: string[];
  started_at: string | null;
  completed_at: string | null;
}

export const RUNNER_GROUPS_TTL_MS = 60 * 60_000;
export const DOWNLOADS_TTL_MS = 60 * 60_000;
/** A group name missing from the cache is looked up again, but not more often than this. */
const RUNNER_GROUPS_MISS_REFRESH_MS = 60_000;
/** GitHub's id of every repository's (and organization's) built-in "Default" group. */
const DEFAULT_RUNNER_GROUP_ID = 1;

/** Every runner registered at the scope (all pages). */
export function listRunners(gh: GithubClient, scope: GithubScope): Promise<GithubRunner[]> {
  return gh.paginate("list_runners", `${scopePath(scope)}/actions/runners`, (p: { runners?: GithubRunner[] }) => p.runners ?? []);
}

/** The runner with exactly this name (GitHub matches names case-insensitively, so do we). */
export async function findRunnerByName(gh: GithubClient, scope: GithubScope, name: string): Promise<GithubRunner | null> {
  const runners = await gh.paginate(
    "find_runner",
    `${scopePath(scope)}/actions/runners`,
    (p: { runners?: GithubRunner[] }) => p.runners ?? [],
    { name },
  );
  return runners.find((r) => r.name.toLowerCase() === name.toLowerCase()) ?? null;
}

/** One runner by id (is it online, busy?). Null when GitHub does not know it. */
export async function getRunner(gh: GithubClient, scope: GithubScope, runnerId: number): Promise<GithubRunner | null> {
  const res = await gh.request<GithubRunner>("get_runner", "GET", `${scopePath(scope)}/actions/runners/${runnerId}`, { allow: [404] });
  return res.status === 404 ? null : res.data;
}

export async function deleteRunner(gh: GithubClient, scope: GithubScope, runnerId: number): Promise<DeleteRunnerResult> {
  const res = await gh.request<{ message?: string } | null>("delete_runner", "DELETE", `${scopePath(scope)}/actions/runners/${runnerId}`, {
    allow: [404, 422],
  });
  if (res.status === 404) return { outcome: "already_gone" };
  if (res.status === 422) return { outcome: "busy", message: res.data?.message ?? "runner is still running a job" };
  return { outcome: "deleted" };
}

export async function createRegistrationToken(gh: GithubClient, scope: GithubScope): Promise<RegistrationToken> {
  const res = await gh.request<Schemas["authentication-token"]>(
    "create_registration_token",
    "POST",
    `${scopePath(scope)}/actions/runners/registration-token`,
  );
  return { token: res.data.token, expiresAt: res.data.expires_at };
}

// Within one client (one unit of work) a resolved group costs no D1 read at all.
const resolvedGroups = new WeakMap<GithubClient, Map<string, number>>();

/**
 * The id of the runner group called `name` ("" or "default" = the default group). Repositories
 * have only the default group. Org and enterprise groups are cached for an hour.
 */
export async function resolveRunnerGroupId(gh: GithubClient, scope: GithubScope, name: string): Promise<number> {
  const wanted = name.trim().toLowerCase();
  const isDefault = wanted === "" || wanted === "default";
  if (scope.kind === "repository") {
    if (isDefault) return DEFAULT_RUNNER_GROUP_ID;
    throw new GithubError(`runner group '${name}': repositories only have the default runner group`);
  }
  const memoKey = `${scopeKey(scope)}|${wanted}`;
  const memo = resolvedGroups.get(gh) ?? new Map<string, number>();
  resolvedGroups.set(gh, memo);
  const known = memo.get(memoKey);
  if (known !== undefined) return known;
  const id = await lookupRunnerGroupId(gh, scope, name, wanted, isDefault);
  memo.set(memoKey, id);
  return id;
}

async function lookupRunnerGroupId(
  gh: GithubClient,
  scope: GithubScope,
  name: string,
  wanted: string,
  isDefault: boolean,
): Promise<number> {
  const { endpointName } = await gh.context();
  const now = gh.clock.now();
  const key = `runner-groups:${scopeKey(scope)}`;
  const load = () =>
    gh.paginate("list_runner_groups", `${scopePath(scope)}/actions/runner-groups`, (p: { runner_groups?: RunnerGroup[] }) =>
      (p.runner_groups ?? []).map((g) => ({ id: g.id, name: g.name, default: g.default })),
    );
  const pick = (groups: RunnerGroup[]) => groups.find((g) => (isDefault ? g.default : g.name.toLowerCase() === wanted));
  let groups = await cachedFetch(gh.db, { endpointName, key, ttlMs: RUNNER_GROUPS_TTL_MS, now }, load);
  let found = pick(groups.value);
  if (!found && groups.fromCache && now - groups.fetchedAt >= RUNNER_GROUPS_MISS_REFRESH_MS) {
    groups = await cachedFetch(gh.db, { endpointName, key, ttlMs: RUNNER_GROUPS_TTL_MS, now, force: true }, load);
    found = pick(groups.value);
  }
  if (found) return found.id;
  if (isDefault) return DEFAULT_RUNNER_GROUP_ID;
  throw new GithubError(`runner group '${name}' does not exist in ${scopePath(scope)}`);
}

export async function generateJitConfig(
  gh: GithubClient,
  scope: GithubScope,
  input: { name: string; labels: string[]; runnerGroup?: string; workFolder?: string; sendBy?: number },
): Promise<JitConfig> {
  const runnerGroupId = await resolveRunnerGroupId(gh, scope, input.runnerGroup ?? "");
  const res = await gh.request<JitConfigResponse>("generate_jit_config", "POST", `${scopePath(scope)}/actions/runners/generate-jitconfig`, {
    body: { name: input.name, runner_group_id: runnerGroupId, labels: input.labels, work_folder: input.workFolder ?? "_work" },
    ...(input.sendBy !== undefined && { sendBy: input.sendBy }),
  });
  return { runner: res.data.runner, encodedJitConfig: res.data.encoded_jit_config };
}

/** Whether a JIT failure is GitHub saying the runner name is taken (409). */
export const isDuplicateRunnerName = (err: unknown) => err instanceof GithubApiError && err.status === 409;

/**
 * Where runner machines download the runner from: cached per entity, refreshed hourly.
 * `temp_download_token`s expire, so this is never served older than the TTL unless GitHub
 * cannot be reached.
 */
export async function listRunnerDownloads(gh: GithubClient, scope: GithubScope, opts: { force?: boolean } = {}): Promise<RunnerDownload[]> {
  const { endpointName } = await gh.context();
  const cached = await cachedFetch(
    gh.db,
    { endpointName, key: `downloads:${scopeKey(scope)}`, ttlMs: DOWNLOADS_TTL_MS, now: gh.clock.now(), force: opts.force },
    async () => (await gh.request<RunnerDownload[]>("list_runner_downloads", "GET", `${scopePath(scope)}/actions/runners/downloads`)).data,
  );
  return cached.value;
}

/** A workflow job's current state (for stale-job checks). Null if GitHub does not know it. */
export async function getJob(gh: GithubClient, repo: { owner: string; repo: string }, jobId: number): Promise<JobStatus | null> {
  const res = await gh.request<JobStatus & Record<string, unknown>>(
    "get_job",
    "GET",
    `/repos/${encodeURIComponent(repo.owner)}/${encodeURIComponent(repo.repo)}/actions/jobs/${jobId}`,
    { allow: [404] },
  );
  if (res.status === 404) return null;
  const j = res.data;
  return {
    id: j.id,
    run_id: j.run_id,
    status: j.status,
    conclusion: j.conclusion ?? null,
    runner_id: j.runner_id ?? null,
    runner_name: j.runner_name ?? null,
    labels: j.labels ?? [],
    started_at: j.started_at ?? null,
    completed_at: j.completed_at ?? null,
  };
}
