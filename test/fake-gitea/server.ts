/**
 * The fake Gitea (1.24 or later) as an HTTP server on loopback, speaking Gitea's wire formats:
 * its REST API as its swagger describes it (test/contract/gitea-contract.test.ts checks the
 * routes we use against a trimmed copy, test/fixtures/gitea/swagger-trimmed.json), the runner.v1
 * Connect JSON service act_runner calls, and signed workflow_job deliveries. Worlds are
 * independent instances:
 *
 *   POST /_fake/worlds                      → {id, url}   a new world (its base URL; REST under /api/v1)
 *   {world}/api/v1/{repos/o/r|orgs/o|admin}/actions/runners[/{id}]      GET, DELETE (a missing runner: 500, faults)
 *   {world}/api/v1/{…}/actions/runners/registration-token               POST (GET too, deprecated)
 *   {world}/api/v1/{…}/hooks[/{id}]                                     GET, POST, PATCH, DELETE
 *   {world}/api/v1/repos/{o}/{r}/actions/jobs/{id}                      GET
 *   {world}/api/v1/repos/{o}/{r}/actions/jobs?status=&page=&limit=        GET   {jobs, total_count} (Gitea 1.25+), 400 for a status Gitea does not know
 *   {world}/api/v1/orgs/{org}/repos?page=&limit=                        GET   Repository[], by name
 *   {world}/api/actions/runner.v1.RunnerService/{Register|Declare|FetchTask|UpdateTask|UpdateLog}  POST (Connect JSON)
 *   {world}/_fake/seed      POST  GiteaSeed: repos, orgs, tokens, runners
 *   {world}/_fake/state     GET   runners, hooks (secrets included), jobs, deliveries, requests
 *   {world}/_fake/jobs      POST  {repository, labels, count?} → {jobs}: queued, delivered to the hooks
 *   {world}/_fake/faults    PUT   GiteaFaults
 *   {world}/_fake/settings  PUT   GiteaSettings ({deliver: true}: POST deliveries to the hooks' URLs)
 *   {world}/_fake/settle    POST  waits until the deliveries made are answered
 *
 * A world lives under /w/{id}; the default world is at the root, for standalone use.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { FakeGiteaHook, FakeGiteaJob, FakeGiteaRunner } from "./types.ts";
import { GiteaWorld } from "./world.ts";

export interface FakeGitea {
  url: string;
  server: Server;
  worlds: Map<string, GiteaWorld>;
  close(): Promise<void>;
}

async function readJson(req: IncomingMessage): Promise<any> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  const text = Buffer.concat(chunks).toString("utf8");
  return text ? JSON.parse(text) : undefined;
}

function send(res: ServerResponse, status: number, body?: unknown, headers: Record<string, string> = {}) {
  const payload = status === 204 || body === undefined ? "" : JSON.stringify(body);
  res.writeHead(status, { ...(payload && { "content-type": "application/json;charset=utf-8" }), ...headers });
  res.end(payload);
}

/** Gitea's error body (APIError: message and the API docs' URL). */
const apiError = (message: string) => ({ message, url: "https://docs.gitea.com/api/1.24/" });

const runnerView = (r: FakeGiteaRunner) => ({
  id: r.id,
  name: r.name,
  status: r.status,
  busy: r.busy,
  ephemeral: r.ephemeral,
  labels: r.labels.map((name, i) => ({ id: i + 1, name, type: "custom" })),
});

const hookView = (h: FakeGiteaHook) => {
  const { secret: _secret, ...config } = h.config;
  return {
    id: h.id,
    type: h.type,
    branch_filter: "*",
    config,
    events: h.events,
    authorization_header: "",
    active: h.active,
    updated_at: h.updated_at,
    created_at: h.created_at,
  };
};

const ZERO = "0001-01-01T00:00:00Z";
const jobView = (base: string, j: FakeGiteaJob) => ({
  id: j.id,
  url: `${base}/api/v1/repos/${j.repository}/actions/jobs/${j.id}`,
  html_url: `${base}/${j.repository}/actions/runs/${j.run_id}/jobs/0`,
  run_id: j.run_id,
  run_url: `${base}/api/v1/repos/${j.repository}/actions/runs/${j.run_id}`,
  name: "build",
  labels: j.labels,
  run_attempt: 1,
  head_sha: "6dcb09b5b57875f334f61aebed695e2e4193db5e",
  head_branch: "main",
  status: j.status,
  conclusion: j.conclusion,
  runner_id: j.runner_id,
  runner_name: j.runner_name,
  steps: [],
  created_at: j.created_at,
  started_at: j.started_at ?? ZERO,
  completed_at: j.completed_at ?? ZERO,
});

/**
 * Which of the fake's jobs a `status` of GET …/actions/jobs takes, as Gitea's routers/api/v1/shared
 * (convertToInternal) maps it to its own statuses: pending, waiting, requested and action_required
 * are Gitea's blocked jobs (the fake has none); completed is any finished one; a conclusion takes the
 * finished jobs with it (neutral counts as skipped, timed_out as cancelled). null: not a status Gitea knows.
 */
function jobStatusFilter(status: string): ((j: FakeGiteaJob) => boolean) | null {
  const finished = (c: string) => (j: FakeGiteaJob) => j.status === "completed" && j.conclusion === c;
  switch (status) {
    case "pending":
    case "waiting":
    case "requested":
    case "action_required":
      return () => false;
    case "queued":
    case "in_progress":
    case "completed":
      return (j) => j.status === status;
    case "failure":
    case "success":
      return finished(status);
    case "skipped":
    case "neutral":
      return finished("skipped");
    case "cancelled":
    case "timed_out":
      return finished("cancelled");
    default:
      return null;
  }
}

/** One page of `all` for `page`/`limit` (Gitea: 30 by default, at most 50), with Gitea's X-Total-Count and Link headers. */
function giteaPage<T>(url: URL, all: T[]): { items: T[]; headers: Record<string, string> } {
  const page = Math.max(1, Number(url.searchParams.get("page") ?? 1) || 1);
  const limit = Math.min(50, Math.max(1, Number(url.searchParams.get("limit") ?? 30) || 30));
  const last = Math.max(1, Math.ceil(all.length / limit));
  const href = (n: number) => {
    const u = new URL(url);
    u.searchParams.set("page", String(n));
    u.searchParams.set("limit", String(limit));
    return `<${u}>`;
  };
  const links = [
    ...(page < last ? [`${href(page + 1)}; rel="next"`, `${href(last)}; rel="last"`] : []),
    ...(page > 1 ? [`${href(1)}; rel="first"`, `${href(page - 1)}; rel="prev"`] : []),
  ];
  return {
    items: all.slice((page - 1) * limit, page * limit),
    headers: { "x-total-count": String(all.length), ...(links.length && { link: links.join(",") }) },
  };
}

/** A user or organization as Gitea's `User` shows it (the fields the trimmed description names). */
const userView = (base: string, login: string) => ({
  id: [...login].reduce((h, c) => (h * 31 + c.charCodeAt(0)) % 1_000_000, 7),
  login,
  login_name: "",
  full_name: "",
  email: "",
  avatar_url: `${base}/avatars/${login}`,
  html_url: `${base}/${login}`,
  is_admin: false,
  active: true,
  visibility: "public",
  username: login,
});

/** A repository as Gitea's `Repository` shows it; updated when a job was last queued in it, else when the instance was made. */
function repositoryView(w: GiteaWorld, base: string, fullName: string) {
  const [owner, name] = fullName.split("/") as [string, string];
  const queued = [...w.jobs.values()].filter((j) => j.repository === fullName).map((j) => j.created_at);
  const updated = queued.length ? queued.sort().at(-1)! : w.createdAt;
  const host = new URL(base).host;
  return {
    id: [...w.repos].indexOf(fullName) + 1,
    owner: userView(base, owner),
    name,
    full_name: fullName,
    description: "",
    empty: false,
    private: true,
    fork: false,
    template: false,
    mirror: false,
    size: 0,
    html_url: `${base}/${fullName}`,
    url: `${base}/api/v1/repos/${fullName}`,
    ssh_url: `git@${host}:${fullName}.git`,
    clone_url: `${base}/${fullName}.git`,
    default_branch: "main",
    archived: false,
    created_at: w.createdAt,
    updated_at: updated,
    has_actions: true,
    internal: false,
  };
}

/** runner.v1's Task for a job: what act_runner needs to run it (a stand-in workflow). */
const taskView = (j: FakeGiteaJob) => ({
  id: j.id,
  workflowPayload: Buffer.from(
    `name: ci\non: push\njobs:\n  build:\n    runs-on: ${JSON.stringify(j.labels)}\n    steps:\n      - run: "true"\n`,
  ).toString("base64"),
  context: { repository: j.repository, run_id: String(j.run_id), job: "build" },
  secrets: {},
  needs: {},
  vars: {},
});

export async function startFakeGitea(options: { port?: number; host?: string } = {}): Promise<FakeGitea> {
  const host = options.host ?? "127.0.0.1";
  const worlds = new Map<string, GiteaWorld>();
  let origin = "";
  const worldOf = (id: string) => {
    let w = worlds.get(id);
    if (!w) {
      w = new GiteaWorld(new URL(origin).host);
      worlds.set(id, w);
    }
    return w;
  };

  const server = createServer(async (req, res) => {
    try {
      const url = new URL(req.url ?? "/", origin);
      let path = url.pathname;
      let worldId = "";
      const wm = /^\/w\/([A-Za-z0-9_-]+)(\/.*)?$/.exec(path);
      if (wm) {
        worldId = wm[1]!;
        path = wm[2] ?? "/";
      }
      const base = worldId ? `${origin}/w/${worldId}` : origin;
      const method = req.method ?? "GET";
      if (!worldId && method === "POST" && path === "/_fake/worlds") {
        const id = crypto.randomUUID().slice(0, 8);
        worldOf(id);
        return send(res, 201, { id, url: `${origin}/w/${id}` });
      }
      const w = worldOf(worldId);
      if (path.startsWith("/_fake/")) return await control(w, method, path, req, res);
      if (path.startsWith("/api/actions/runner.v1.RunnerService/")) return await runnerService(w, path, req, res);
      if (path.startsWith("/api/v1/")) return await rest(w, base, method, path.slice("/api/v1".length), url, req, res);
      send(res, 404, apiError("not found"));
    } catch (err) {
      send(res, 500, apiError(err instanceof Error ? err.message : String(err)));
    }
  });

  async function control(w: GiteaWorld, method: string, path: string, req: IncomingMessage, res: ServerResponse) {
    if (method === "POST" && path === "/_fake/seed") {
      w.seed((await readJson(req)) ?? {});
      return send(res, 204);
    }
    if (method === "GET" && path === "/_fake/state") return send(res, 200, w.state());
    if (method === "POST" && path === "/_fake/jobs") {
      const b = (await readJson(req)) as { repository: string; labels: string[]; count?: number };
      const jobs = Array.from({ length: b.count ?? 1 }, () => w.queueJob(b.repository, b.labels));
      return send(res, 201, { jobs });
    }
    if (method === "PUT" && path === "/_fake/faults") {
      w.faults = (await readJson(req)) ?? {};
      return send(res, 204);
    }
    if (method === "PUT" && path === "/_fake/settings") {
      w.settings = { ...w.settings, ...((await readJson(req)) ?? {}) };
      return send(res, 204);
    }
    if (method === "POST" && path === "/_fake/settle") {
      await w.settle();
      return send(res, 204);
    }
    send(res, 404, apiError("no such control route"));
  }

  /** runner.v1 over Connect's JSON: POST, JSON in and out; every call but Register names the runner in x-runner-uuid/x-runner-token. */
  async function runnerService(w: GiteaWorld, path: string, req: IncomingMessage, res: ServerResponse) {
    const rpc = path.slice("/api/actions/runner.v1.RunnerService/".length);
    const body = (await readJson(req)) ?? {};
    const connectError = (status: number, code: string, message: string) => send(res, status, { code, message });
    if (rpc === "Register") {
      const r = w.register({
        token: body.token ?? "",
        name: body.name ?? "",
        labels: body.labels ?? [],
        ephemeral: body.ephemeral === true,
      });
      if (!r) return connectError(401, "unauthenticated", "runner registration token not found");
      return send(res, 200, { runner: { id: r.id, uuid: r.uuid, token: r.token, name: r.name, labels: r.labels, ephemeral: r.ephemeral } });
    }
    const runner = w.runnerByCredentials(req.headers["x-runner-uuid"] as string, req.headers["x-runner-token"] as string);
    if (!runner) return connectError(401, "unauthenticated", "unregistered runner");
    switch (rpc) {
      case "Declare":
        if (Array.isArray(body.labels)) runner.labels = body.labels;
        return send(res, 200, {
          runner: { id: runner.id, uuid: runner.uuid, name: runner.name, labels: runner.labels, ephemeral: runner.ephemeral },
        });
      case "FetchTask": {
        const job = w.fetchTask(runner);
        return send(res, 200, job ? { task: taskView(job), tasksVersion: String(job.id) } : { tasksVersion: "0" });
      }
      case "UpdateTask": {
        const state = body.state ?? {};
        const result = String(state.result ?? "RESULT_UNSPECIFIED");
        if (result !== "RESULT_UNSPECIFIED") {
          const conclusion =
            { RESULT_SUCCESS: "success", RESULT_FAILURE: "failure", RESULT_CANCELLED: "cancelled", RESULT_SKIPPED: "skipped" }[result] ??
            "failure";
          if (!w.finishTask(runner, Number(state.id), conclusion)) return connectError(404, "not_found", "task not found");
        }
        return send(res, 200, { state: { id: state.id, result } });
      }
      case "UpdateLog":
        return send(res, 200, { ackIndex: String((Number(body.index ?? 0) || 0) + (Array.isArray(body.rows) ? body.rows.length : 0)) });
      default:
        return connectError(404, "unimplemented", `no method ${rpc}`);
    }
  }

  async function rest(w: GiteaWorld, base: string, method: string, path: string, url: URL, req: IncomingMessage, res: ServerResponse) {
    const auth = /^(token|bearer)\s+(\S+)$/i.exec(req.headers.authorization ?? "");
    w.requests.push({ method, path, scheme: auth ? auth[1]!.toLowerCase() : null });
    const user = auth ? w.tokens.get(auth[2]!) : undefined;
    if (!user) return send(res, 401, apiError("token is required"));
    const next = w.faults.next;
    if (next) {
      if ((next.count ?? 1) <= 1) w.faults.next = null;
      else next.count = (next.count ?? 1) - 1;
      return send(res, next.status, apiError("injected fault"), next.retry_after ? { "retry-after": String(next.retry_after) } : {});
    }
    const m = /^\/(repos\/[^/]+\/[^/]+|orgs\/[^/]+|admin)(\/.*)$/.exec(path);
    if (!m) return send(res, 404, apiError("not found"));
    const scope = decodeURIComponent(m[1]!);
    const rest = m[2]!;
    if (scope === "admin" && !user.admin) return send(res, 403, apiError("reqSiteAdmin"));
    if (!w.scopeExists(scope)) return send(res, 404, apiError("GetRepositoryByName"));

    if (rest === "/actions/runners/registration-token" && (method === "POST" || method === "GET")) {
      return send(res, 200, { token: w.registrationToken(scope) });
    }
    if (rest === "/actions/runners" && method === "GET") {
      const all = w.runnersOf(scope);
      const page = Math.max(1, Number(url.searchParams.get("page") ?? 1));
      const limit = Math.min(50, Math.max(1, Number(url.searchParams.get("limit") ?? 30)));
      return send(
        res,
        200,
        { runners: all.slice((page - 1) * limit, page * limit).map(runnerView), total_count: all.length },
        {
          "x-total-count": String(all.length),
        },
      );
    }
    const rm = /^\/actions\/runners\/(\d+)$/.exec(rest);
    if (rm) {
      const r = w.runners.get(Number(rm[1]));
      const visible = r && (scope === "admin" || r.scope === scope) ? r : null;
      if (method === "GET") return visible ? send(res, 200, runnerView(visible)) : send(res, 404, apiError("Runner not found"));
      if (method === "DELETE") {
        if (!visible) {
          const status = w.faults.missing_runner_status ?? 500;
          return send(res, status, apiError(status === 500 ? `runner with id ${rm[1]} does not exist` : "Runner not found"));
        }
        w.runners.delete(visible.id);
        return send(res, 204);
      }
    }
    if (rest === "/actions/jobs" && method === "GET" && scope.startsWith("repos/")) {
      const filters: ((j: FakeGiteaJob) => boolean)[] = [];
      for (const status of url.searchParams.getAll("status")) {
        const f = jobStatusFilter(status);
        if (!f) return send(res, 400, apiError(`Invalid status ${status}`));
        filters.push(f);
      }
      const all = [...w.jobs.values()]
        .filter((j) => `repos/${j.repository}` === scope && (!filters.length || filters.some((f) => f(j))))
        .sort((a, b) => a.id - b.id);
      const { items, headers } = giteaPage(url, all);
      return send(res, 200, { jobs: items.map((j) => jobView(base, j)), total_count: all.length }, headers);
    }
    if (rest === "/repos" && method === "GET" && scope.startsWith("orgs/")) {
      const org = scope.slice("orgs/".length);
      const all = [...w.repos].filter((r) => r.split("/")[0] === org).sort((a, b) => (a.split("/")[1]! < b.split("/")[1]! ? -1 : 1));
      const { items, headers } = giteaPage(url, all);
      return send(
        res,
        200,
        items.map((r) => repositoryView(w, base, r)),
        headers,
      );
    }
    const jm = /^\/actions\/jobs\/(\d+)$/.exec(rest);
    if (jm && method === "GET" && scope.startsWith("repos/")) {
      const j = w.jobs.get(Number(jm[1]));
      return j && `repos/${j.repository}` === scope ? send(res, 200, jobView(base, j)) : send(res, 404, apiError("job not found"));
    }
    if (rest === "/hooks") {
      if (method === "GET") {
        const all = [...w.hooks.values()].filter((h) => h.scope === scope);
        const page = Math.max(1, Number(url.searchParams.get("page") ?? 1));
        const limit = Math.min(50, Math.max(1, Number(url.searchParams.get("limit") ?? 30)));
        return send(res, 200, all.slice((page - 1) * limit, page * limit).map(hookView), { "x-total-count": String(all.length) });
      }
      if (method === "POST") {
        const b = (await readJson(req)) ?? {};
        if (!b.type || !b.config?.url || !b.config?.content_type) return send(res, 422, apiError("[Type] [Config]: Required"));
        return send(res, 201, hookView(w.addHook(scope, b)));
      }
    }
    const hm = /^\/hooks\/(\d+)$/.exec(rest);
    if (hm) {
      const h = w.hooks.get(Number(hm[1]));
      if (!h || h.scope !== scope) return send(res, 404, apiError("hook not found"));
      if (method === "GET") return send(res, 200, hookView(h));
      if (method === "PATCH") {
        const b = (await readJson(req)) ?? {};
        if (b.config) h.config = { ...h.config, ...b.config };
        if (b.events) h.events = b.events;
        if (b.active !== undefined) h.active = b.active;
        h.updated_at = new Date().toISOString();
        return send(res, 200, hookView(h));
      }
      if (method === "DELETE") {
        w.hooks.delete(h.id);
        return send(res, 204);
      }
    }
    send(res, 404, apiError("not found"));
  }

  await new Promise<void>((resolve) => server.listen(options.port ?? 0, host, resolve));
  origin = `http://${host}:${(server.address() as AddressInfo).port}`;
  // The default world exists from the start, so a standalone run can set it up before any request.
  worldOf("");
  return {
    url: origin,
    server,
    worlds,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
