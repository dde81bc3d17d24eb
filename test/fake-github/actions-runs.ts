/**
 * The fake GitHub's reads a backstop uses to find queued jobs whose webhooks were lost: a
 * repository's workflow runs and a run's jobs (both made from the world's jobs, seeded or played,
 * grouped by `run_id`), an organization's repositories (whose `pushed_at` moves when a job is
 * queued in them, as a push or a schedule queues one on GitHub), and the instance's organizations.
 * Answers follow GitHub's OpenAPI description (checked by test/contract). Kept apart from world.ts,
 * which joins ACTIONS_RUN_ROUTES to its table; like apps/reads.ts, this file must not import
 * world.ts at run time (world.ts imports it).
 */

import { covers, registryOf } from "./apps/registry.ts";
import { DEFAULT_INSTALLATION_PERMISSIONS, nodeId, repositoryView, simpleUser } from "./apps/rest.ts";
import { error, json, page } from "./rest-answers.ts";
import type { SeedJob } from "./types.ts";
import type { FakeRequest, FakeResponse, Principal, Route, World } from "./world.ts";

/** A job as the world keeps it (World.putJob). */
type Job = Required<SeedJob>;

const lc = (s: string) => s.toLowerCase();
const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z");
const webOf = (api: string) => api.replace(/\/api\/v3$/, "");
const HEAD_SHA = "f".repeat(40);

/** A job as GitHub's `job` schema shows it (GET …/actions/jobs/{id}, and each job of a run's list). */
export function jobView(j: Job, repo: string, base: string) {
  // The fake keeps no start or end times: a job that left the queue started (and ended) when it was queued.
  const created = iso(j.queued_at);
  return {
    id: j.id,
    run_id: j.run_id,
    run_url: `${base}/repos/${repo}/actions/runs/${j.run_id}`,
    run_attempt: j.run_attempt,
    node_id: `CR_${j.id}`,
    head_sha: HEAD_SHA,
    url: `${base}/repos/${repo}/actions/jobs/${j.id}`,
    html_url: `https://github.com/${repo}/actions/runs/${j.run_id}/job/${j.id}`,
    status: j.status,
    conclusion: j.status === "completed" ? (j.conclusion ?? "success") : null,
    created_at: created,
    started_at: created,
    completed_at: j.status === "completed" ? created : null,
    name: j.name,
    steps: [],
    check_run_url: `${base}/repos/${repo}/check-runs/${j.id}`,
    labels: j.labels,
    runner_id: j.runner_id,
    runner_name: j.runner_name,
    runner_group_id: j.runner_id === null ? null : 1,
    runner_group_name: j.runner_id === null ? null : "Default",
    workflow_name: j.workflow_name,
    head_branch: "main",
  };
}

/** What a repository's Actions reads need beyond seeing it: an installation must hold `actions` (read or write). */
function actionsAccess(w: World, repo: string, who: Principal): FakeResponse | null {
  const denied = w.scopeAccess(`repos/${repo}`, who);
  if (denied) return denied;
  if (who.kind !== "installation") return null;
  const inst = w.installations.get(who.installationId);
  const level = (inst?.permissions ?? DEFAULT_INSTALLATION_PERMISSIONS).actions;
  return level === "read" || level === "write" ? null : error(403, "Resource not accessible by integration");
}

interface Run {
  id: number;
  repo: string;
  jobs: Job[];
  number: number;
  status: string;
  conclusion: string | null;
  createdAt: number;
  /** When its latest attempt was queued. */
  startedAt: number;
  updatedAt: number;
  attempt: number;
}

/**
 * A run's status: the one its jobs share (`queued` when all are queued, `completed` when all are
 * done, …), else `in_progress`. Its conclusion once completed: failure if a job failed (or timed
 * out), else cancelled if one was cancelled, skipped if all were, else success.
 */
function runStatus(jobs: Job[]): { status: string; conclusion: string | null } {
  const statuses = new Set(jobs.map((j) => j.status));
  const status = statuses.size === 1 ? [...statuses][0]! : "in_progress";
  if (status !== "completed") return { status, conclusion: null };
  const conclusions = jobs.map((j) => j.conclusion ?? "success");
  const conclusion = conclusions.some((c) => c === "failure" || c === "timed_out")
    ? "failure"
    : conclusions.includes("cancelled")
      ? "cancelled"
      : conclusions.every((c) => c === "skipped")
        ? "skipped"
        : "success";
  return { status, conclusion };
}

/** The repository's runs, oldest first, numbered from 1 as GitHub numbers them. */
function runsOf(w: World, repo: string): Run[] {
  const byId = new Map<number, Job[]>();
  for (const j of w.jobs.values()) if (j.repository === repo) byId.set(j.run_id, [...(byId.get(j.run_id) ?? []), j]);
  const runs = [...byId].map(([id, jobs]) => {
    const attempt = Math.max(...jobs.map((j) => j.run_attempt));
    const latest = jobs.filter((j) => j.run_attempt === attempt);
    return {
      id,
      repo,
      jobs: jobs.sort((a, b) => a.id - b.id),
      number: 0,
      // A re-run shows its latest attempt.
      ...runStatus(latest),
      createdAt: Math.min(...jobs.map((j) => j.queued_at)),
      startedAt: Math.min(...latest.map((j) => j.queued_at)),
      updatedAt: Math.max(...jobs.map((j) => j.updated_at)),
      attempt,
    };
  });
  runs.sort((a, b) => a.createdAt - b.createdAt || a.id - b.id);
  runs.forEach((r, i) => {
    r.number = i + 1;
  });
  return runs;
}

const RUN_STATUSES = new Set(["queued", "in_progress", "completed", "waiting", "requested", "pending"]);
const RUN_CONCLUSIONS = new Set(["action_required", "cancelled", "failure", "neutral", "skipped", "stale", "success", "timed_out"]);

/** `status`: a run's status or its conclusion (GitHub's enum); any other value matches no run. */
function statusMatches(run: Run, wanted: string | undefined): boolean {
  if (!wanted) return true;
  if (RUN_STATUSES.has(wanted)) return run.status === wanted;
  if (RUN_CONCLUSIONS.has(wanted)) return run.conclusion === wanted;
  return false;
}

const DAY_MS = 24 * 60 * 60_000;

/**
 * GitHub's search syntax for dates (`created`): `>=T`, `>T`, `<=T`, `<T`, `A..B` (`*` open), or one
 * date (`YYYY-MM-DD`: that day) or date-time. Something else: no run matches it.
 */
export function createdMatcher(q: string | undefined): (ms: number) => boolean {
  if (!q) return () => true;
  const at = (s: string) => {
    const ms = Date.parse(s.trim());
    return Number.isNaN(ms) ? null : ms;
  };
  const dayOnly = (s: string) => /^\d{4}-\d{2}-\d{2}$/.test(s.trim());
  const cmp = /^(>=|<=|>|<)(.+)$/.exec(q.trim());
  if (cmp) {
    const t = at(cmp[2]!);
    if (t === null) return () => false;
    // `>2024-01-01` means after that day, `<=2024-01-01` up to its end.
    const end = dayOnly(cmp[2]!) ? t + DAY_MS : t + 1000;
    return { ">=": (ms: number) => ms >= t, ">": (ms: number) => ms >= end, "<": (ms: number) => ms < t, "<=": (ms: number) => ms < end }[
      cmp[1] as ">=" | ">" | "<" | "<="
    ];
  }
  const range = /^(.+)\.\.(.+)$/.exec(q.trim());
  if (range) {
    const [from, to] = [range[1]!.trim(), range[2]!.trim()];
    const lo = from === "*" ? Number.NEGATIVE_INFINITY : at(from);
    const hiAt = to === "*" ? Number.POSITIVE_INFINITY : at(to);
    if (lo === null || hiAt === null) return () => false;
    const hi = to !== "*" && dayOnly(to) ? hiAt + DAY_MS : hiAt + 1000;
    return (ms) => ms >= lo && ms < hi;
  }
  const t = at(q);
  if (t === null) return () => false;
  const end = dayOnly(q) ? t + DAY_MS : t + 1000;
  return (ms) => ms >= t && ms < end;
}

/** When the repository was last pushed to: when its last job was queued, else when the world was made. */
function pushedAt(w: World, repo: string): number {
  let last: number | null = null;
  for (const j of w.jobs.values()) if (j.repository === repo && (last === null || j.queued_at > last)) last = j.queued_at;
  return last ?? w.createdAt;
}

/** A repository as GitHub's `minimal-repository` schema shows it, with the world's times. */
function minimalRepositoryView(w: World, repo: string, api: string) {
  const pushed = iso(pushedAt(w, repo));
  return { ...repositoryView(registryOf(w), repo, api, webOf(api), w.createdAt), pushed_at: pushed, updated_at: pushed };
}

/** A run as GitHub's `workflow-run` schema shows it. */
function runView(w: World, run: Run, api: string) {
  const reg = registryOf(w);
  const web = webOf(api);
  const u = `${api}/repos/${run.repo}/actions/runs/${run.id}`;
  const workflow = run.jobs[0]!.workflow_name;
  const workflowId = reg.idOf(`workflow:${run.repo}:${workflow}`);
  const checkSuiteId = reg.idOf(`check-suite:${run.repo}:${run.id}`);
  const repository = minimalRepositoryView(w, run.repo, api);
  const actor = simpleUser(reg, reg.webUser, api, web);
  const created = iso(run.createdAt);
  const person = { name: "Monalisa Octocat", email: "octocat@github.com" };
  return {
    id: run.id,
    name: workflow,
    node_id: nodeId("WorkflowRun", run.id),
    check_suite_id: checkSuiteId,
    check_suite_node_id: nodeId("CheckSuite", checkSuiteId),
    head_branch: "main",
    head_sha: HEAD_SHA,
    path: ".github/workflows/ci.yml",
    display_title: workflow,
    run_number: run.number,
    run_attempt: run.attempt,
    referenced_workflows: [],
    event: "push",
    status: run.status,
    conclusion: run.conclusion,
    workflow_id: workflowId,
    url: u,
    html_url: `${web}/${run.repo}/actions/runs/${run.id}`,
    pull_requests: [],
    created_at: created,
    updated_at: iso(run.updatedAt),
    actor,
    triggering_actor: actor,
    run_started_at: iso(run.startedAt),
    jobs_url: `${u}/jobs`,
    logs_url: `${u}/logs`,
    check_suite_url: `${api}/repos/${run.repo}/check-suites/${checkSuiteId}`,
    artifacts_url: `${u}/artifacts`,
    cancel_url: `${u}/cancel`,
    rerun_url: `${u}/rerun`,
    previous_attempt_url: run.attempt > 1 ? `${u}/attempts/${run.attempt - 1}` : null,
    workflow_url: `${api}/repos/${run.repo}/actions/workflows/${workflowId}`,
    head_commit: { id: HEAD_SHA, tree_id: "e".repeat(40), message: "Push", timestamp: created, author: person, committer: person },
    repository,
    head_repository: repository,
    head_repository_id: repository.id,
  };
}

/** An organization as GitHub's `organization-simple` schema shows it. */
function organizationView(w: World, login: string, api: string) {
  const id = registryOf(w).accountId(login);
  const u = `${api}/orgs/${login}`;
  return {
    login,
    id,
    node_id: nodeId("Organization", id),
    url: u,
    repos_url: `${u}/repos`,
    events_url: `${u}/events`,
    hooks_url: `${u}/hooks`,
    issues_url: `${u}/issues`,
    members_url: `${u}/members{/member}`,
    public_members_url: `${u}/public_members{/member}`,
    avatar_url: `https://avatars.githubusercontent.com/u/${id}?v=4`,
    description: null,
  };
}

const perPage = (req: FakeRequest) => Math.min(100, Math.max(1, Number(req.query.per_page ?? 30) || 30));
const repoOf = (m: RegExpExecArray) => lc(decodeURIComponent(m[1]!));

const REPO_SORTS: Record<string, (w: World, repo: string) => number | string> = {
  created: (w) => w.createdAt,
  updated: pushedAt,
  pushed: pushedAt,
  full_name: (_w, repo) => repo,
};

export const ACTIONS_RUN_ROUTES: Route[] = [
  {
    method: "GET",
    pattern: /^\/repos\/([^/]+\/[^/]+)\/actions\/runs$/,
    operation: "list_workflow_runs",
    handler: (w, req, m, who) => {
      const repo = repoOf(m);
      const denied = actionsAccess(w, repo, who);
      if (denied) return denied;
      const created = createdMatcher(req.query.created);
      const all = runsOf(w, repo)
        .filter((r) => statusMatches(r, req.query.status) && created(r.createdAt))
        .reverse();
      const { items, link } = page(req, all);
      return json(200, { total_count: all.length, workflow_runs: items.map((r) => runView(w, r, req.baseUrl)) }, link ? { link } : {});
    },
  },
  {
    method: "GET",
    pattern: /^\/repos\/([^/]+\/[^/]+)\/actions\/runs\/(\d+)\/jobs$/,
    operation: "list_run_jobs",
    handler: (w, req, m, who) => {
      const repo = repoOf(m);
      const denied = actionsAccess(w, repo, who);
      if (denied) return denied;
      const run = runsOf(w, repo).find((r) => r.id === Number(m[2]));
      if (!run) return error(404, "Not Found");
      // `latest` (the default): the jobs of the run's last attempt; `all`: every attempt's.
      const jobs = req.query.filter === "all" ? run.jobs : run.jobs.filter((j) => j.run_attempt === run.attempt);
      const { items, link } = page(req, jobs);
      return json(200, { total_count: jobs.length, jobs: items.map((j) => jobView(j, repo, req.baseUrl)) }, link ? { link } : {});
    },
  },
  {
    method: "GET",
    pattern: /^\/orgs\/([^/]+)\/repos$/,
    operation: "list_org_repos",
    handler: (w, req, m, who) => {
      const org = lc(decodeURIComponent(m[1]!));
      const denied = w.scopeAccess(`orgs/${org}`, who);
      if (denied) return denied;
      const inst = who.kind === "installation" ? w.installations.get(who.installationId) : undefined;
      const visible = registryOf(w)
        .repositoriesOf(org)
        .filter((r) => !inst || covers(inst, r));
      // The world's repositories are all private sources: `public` and `forks` list none.
      const typed = req.query.type === "public" || req.query.type === "forks" ? [] : visible;
      const sort = req.query.sort && Object.hasOwn(REPO_SORTS, req.query.sort) ? req.query.sort : "created";
      const direction = req.query.direction ?? (sort === "full_name" ? "asc" : "desc");
      const key = REPO_SORTS[sort]!;
      const sorted = typed
        .map((r) => ({ r, k: key(w, r) }))
        .sort((a, b) => (a.k < b.k ? -1 : a.k > b.k ? 1 : 0) * (direction === "asc" ? 1 : -1) || (a.r < b.r ? -1 : 1))
        .map((x) => x.r);
      const { items, link } = page(req, sorted);
      return json(
        200,
        items.map((r) => minimalRepositoryView(w, r, req.baseUrl)),
        link ? { link } : {},
      );
    },
  },
  {
    method: "GET",
    pattern: /^\/organizations$/,
    operation: "list_organizations",
    handler: (w, req) => {
      // An App JWT never gets here: World.handle refuses a JWT for a route that does not take one.
      const since = Number(req.query.since ?? 0) || 0;
      const n = perPage(req);
      const all = [...w.orgs]
        .map((o) => organizationView(w, o, req.baseUrl))
        .filter((o) => o.id > since)
        .sort((a, b) => a.id - b.id);
      const items = all.slice(0, n);
      const next = all.length > n ? `<${req.baseUrl}/organizations?since=${items.at(-1)!.id}&per_page=${n}>; rel="next"` : null;
      return json(200, items, next ? { link: next } : {});
    },
  },
];
