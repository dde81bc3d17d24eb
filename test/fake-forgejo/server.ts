/**
 * The fake Forgejo as an HTTP server on loopback. Worlds are independent Forgejo instances:
 *
 *   POST /_fake/worlds                 → {id, url, api_url}   a new world (the default one is at the root)
 *   {world}/api/v1/…                   Forgejo REST: the runner API of a repository, organization or the instance
 *     GET    {scope}/actions/runners/jobs        waiting jobs (and running ones, as Forgejo lists them), each with a handle
 *     POST   {scope}/actions/runners             {name, description?, ephemeral?} → 201 {id, uuid, token}
 *     GET    {scope}/actions/runners             ?page&limit, X-Total-Count
 *     GET    {scope}/actions/runners/{id}        200, or 404
 *     DELETE {scope}/actions/runners/{id}        204, or 404
 *     ({scope}: /repos/{owner}/{repo}, /orgs/{org}, /admin)
 *   {world}/api/actions/runner.v1.RunnerService/{Declare|FetchTask|UpdateTask}
 *                                      the runner side (Connect, JSON; x-runner-uuid/x-runner-token),
 *                                      as forgejo-runner one-job calls it; FetchTask takes `handle`
 *
 * Control (never recorded, never faulted):
 *   {world}/_fake/tokens       POST    {token}: an access token the REST API accepts (`Authorization: token …`)
 *   {world}/_fake/jobs         POST    {owner, repo, runs_on, name?, count?} → the waiting jobs made
 *   {world}/_fake/jobs/{id}/cancel POST  the job is cancelled (it leaves the waiting list)
 *   {world}/_fake/state        GET     {jobs, runners} (runner tokens left out)
 *   {world}/_fake/faults       POST    {status, path?, count?, retry_after?}; DELETE clears them
 *   {world}/_fake/latency      PUT     {ms}: every REST answer waits this long
 *   {world}/_fake/requests     GET     the REST requests made (method, path)
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { type FakeRunner, ForgejoWorld, type Scope } from "./world.ts";

export interface FakeForgejo {
  url: string;
  server: Server;
  worlds: Map<string, ForgejoWorld>;
  close(): Promise<void>;
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString("utf8");
  if (!text) return {};
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function send(res: ServerResponse, status: number, body?: unknown, headers: Record<string, string> = {}) {
  if (body === undefined) {
    res.writeHead(status, headers).end();
    return;
  }
  res.writeHead(status, { "content-type": "application/json", ...headers }).end(JSON.stringify(body));
}

/** Forgejo's API error shape (`APIError`: message and url). */
const apiError = (res: ServerResponse, status: number, message: string) =>
  send(res, status, { message, url: "https://forgejo.test/api/swagger" });

const jobView = (j: ReturnType<ForgejoWorld["listJobs"]>[number]) => ({
  id: j.id,
  run_id: j.run_id,
  attempt: j.attempt,
  handle: j.handle,
  repo_id: j.repo_id,
  owner_id: j.owner_id,
  name: j.name,
  needs: null,
  runs_on: j.runs_on,
  task_id: j.task_id,
  status: j.status,
});

const runnerView = (r: FakeRunner) => ({
  id: r.id,
  uuid: r.uuid,
  name: r.name,
  version: r.version,
  owner_id: 0,
  repo_id: 0,
  description: r.description,
  labels: r.labels,
  status: r.status,
  ephemeral: r.ephemeral,
});

/** The scope and the rest of a `/api/v1/…/actions/runners…` path. */
function parseScope(path: string): { scope: Scope; rest: string } | null {
  let m = /^\/repos\/([^/]+)\/([^/]+)\/actions\/runners(\/.*)?$/.exec(path);
  if (m) return { scope: { kind: "repository", owner: decodeURIComponent(m[1]!), repo: decodeURIComponent(m[2]!) }, rest: m[3] ?? "" };
  m = /^\/orgs\/([^/]+)\/actions\/runners(\/.*)?$/.exec(path);
  if (m) return { scope: { kind: "organization", org: decodeURIComponent(m[1]!) }, rest: m[2] ?? "" };
  m = /^\/admin\/actions\/runners(\/.*)?$/.exec(path);
  if (m) return { scope: { kind: "instance" }, rest: m[1] ?? "" };
  return null;
}

async function rest(world: ForgejoWorld, req: IncomingMessage, res: ServerResponse, path: string, query: URLSearchParams) {
  const method = req.method ?? "GET";
  world.requests.push({ method, path: `/api/v1${path}`, at: Date.now() });
  if (world.latencyMs > 0) await new Promise((r) => setTimeout(r, world.latencyMs));
  const fault = world.takeFault(path);
  if (fault) {
    const headers: Record<string, string> = fault.retry_after !== undefined ? { "retry-after": String(fault.retry_after) } : {};
    send(res, fault.status, { message: `injected fault ${fault.status}`, url: "" }, headers);
    return;
  }
  const auth = req.headers.authorization ?? "";
  const token = /^token (.+)$/i.exec(auth)?.[1];
  if (!token || !world.tokens.has(token)) return apiError(res, 401, "token is required");
  const parsed = parseScope(path);
  if (!parsed) return apiError(res, 404, "not found");
  const { scope, rest: tail } = parsed;
  if (tail === "/jobs" && method === "GET") return send(res, 200, world.listJobs(scope).map(jobView));
  if (tail === "" && method === "POST") {
    const body = (await readJson(req)) as { name?: unknown; description?: unknown; ephemeral?: unknown } | undefined;
    if (!body || typeof body.name !== "string" || !body.name) return apiError(res, 422, "[Name]: Required");
    const r = world.register(scope, {
      name: body.name,
      description: typeof body.description === "string" ? body.description : "",
      ephemeral: body.ephemeral === true,
    });
    return send(res, 201, { id: r.id, uuid: r.uuid, token: r.token });
  }
  if (tail === "" && method === "GET") {
    const all = world.runnersOf(scope);
    const limit = Math.max(1, Number(query.get("limit") ?? 50));
    const page = Math.max(1, Number(query.get("page") ?? 1));
    return send(res, 200, all.slice((page - 1) * limit, page * limit).map(runnerView), { "x-total-count": String(all.length) });
  }
  const m = /^\/(\d+)$/.exec(tail);
  if (m) {
    const runner = world.runners.get(Number(m[1]));
    if (!runner || !world.sameScope(runner.scope, scope)) return apiError(res, 404, "runner not found");
    if (method === "GET") return send(res, 200, runnerView(runner));
    if (method === "DELETE") {
      world.runners.delete(runner.id);
      return send(res, 204);
    }
  }
  return apiError(res, 405, "method not allowed");
}

/** The runner.v1 service, JSON over Connect: what forgejo-runner one-job calls (as far as the fake needs). */
async function runnerService(world: ForgejoWorld, req: IncomingMessage, res: ServerResponse, method: string) {
  const runner = world.runnerByCredentials(req.headers["x-runner-uuid"] as string, req.headers["x-runner-token"] as string);
  if (!runner) return send(res, 401, { code: "unauthenticated", message: "unregistered runner" });
  const body = ((await readJson(req)) ?? {}) as Record<string, unknown>;
  if (method === "Declare") {
    runner.labels = Array.isArray(body.labels) ? body.labels.map(String) : [];
    runner.version = typeof body.version === "string" ? body.version : "";
    if (runner.status === "offline") runner.status = "idle";
    return send(res, 200, {
      runner: { id: runner.id, uuid: runner.uuid, name: runner.name, version: runner.version, labels: runner.labels },
    });
  }
  if (method === "FetchTask") {
    const job = world.fetchTask(runner, typeof body.handle === "string" ? body.handle : undefined);
    return send(
      res,
      200,
      job ? { task: { id: job.task_id, context: { job_id: job.id, handle: job.handle } }, tasksVersion: 1 } : { tasksVersion: 1 },
    );
  }
  if (method === "UpdateTask") {
    const state = (body.state ?? {}) as { id?: unknown; result?: unknown };
    const result = state.result === "RESULT_FAILURE" ? "failure" : "success";
    const job = world.finishTask(runner, Number(state.id), result);
    if (!job) return send(res, 404, { code: "not_found", message: "task not found" });
    return send(res, 200, { state: { id: state.id, result: state.result ?? "RESULT_SUCCESS" } });
  }
  return send(res, 404, { code: "unimplemented", message: `${method} is not served by the fake` });
}

async function control(world: ForgejoWorld, req: IncomingMessage, res: ServerResponse, path: string) {
  const method = req.method ?? "GET";
  if (path === "/tokens" && method === "POST") {
    const body = (await readJson(req)) as { token?: string } | undefined;
    if (!body?.token) return send(res, 400, { error: "token required" });
    world.tokens.add(body.token);
    return send(res, 204);
  }
  if (path === "/jobs" && method === "POST") {
    const body = (await readJson(req)) as { owner?: string; repo?: string; runs_on?: string[]; name?: string; count?: number } | undefined;
    if (!body?.owner || !body.repo || !Array.isArray(body.runs_on)) return send(res, 400, { error: "owner, repo and runs_on required" });
    const made = world.addJobs({ owner: body.owner, repo: body.repo, runs_on: body.runs_on, name: body.name, count: body.count });
    return send(res, 201, made);
  }
  const cancel = /^\/jobs\/(\d+)\/cancel$/.exec(path);
  if (cancel && method === "POST") {
    const job = world.jobs.get(Number(cancel[1]));
    if (!job) return send(res, 404, { error: "no such job" });
    job.status = "cancelled";
    return send(res, 200, job);
  }
  if (path === "/state" && method === "GET")
    return send(res, 200, { jobs: [...world.jobs.values()], runners: [...world.runners.values()].map(({ token: _t, ...r }) => r) });
  if (path === "/faults" && method === "POST") {
    const body = (await readJson(req)) as { status?: number; path?: string; count?: number; retry_after?: number } | undefined;
    if (!body?.status) return send(res, 400, { error: "status required" });
    world.faults.push({ status: body.status, path: body.path, count: body.count ?? 1, retry_after: body.retry_after });
    return send(res, 204);
  }
  if (path === "/faults" && method === "DELETE") {
    world.faults = [];
    return send(res, 204);
  }
  if (path === "/latency" && method === "PUT") {
    const body = (await readJson(req)) as { ms?: number } | undefined;
    world.latencyMs = Math.max(0, Number(body?.ms ?? 0));
    return send(res, 204);
  }
  if (path === "/requests" && method === "GET") return send(res, 200, world.requests);
  return send(res, 404, { error: `no control route ${method} ${path}` });
}

export async function startFakeForgejo(opts: { port?: number } = {}): Promise<FakeForgejo> {
  const worlds = new Map<string, ForgejoWorld>([["default", new ForgejoWorld()]]);
  let base = "";
  let nextWorld = 1;
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://fake");
    let path = url.pathname;
    let world = worlds.get("default")!;
    let prefix = "";
    const w = /^\/w\/([^/]+)(\/.*)$/.exec(path);
    if (w) {
      const found = worlds.get(w[1]!);
      if (!found) return send(res, 404, { error: "no such world" });
      world = found;
      prefix = `/w/${w[1]}`;
      path = w[2]!;
    }
    const handle = async () => {
      if (!prefix && path === "/_fake/worlds" && req.method === "POST") {
        const id = `w${nextWorld++}`;
        worlds.set(id, new ForgejoWorld());
        return send(res, 201, { id, url: `${base}/w/${id}`, api_url: `${base}/w/${id}/api/v1` });
      }
      if (path.startsWith("/_fake/")) return control(world, req, res, path.slice("/_fake".length));
      const svc = /^\/api\/actions\/runner\.v1\.RunnerService\/(\w+)$/.exec(path);
      if (svc && req.method === "POST") return runnerService(world, req, res, svc[1]!);
      if (path.startsWith("/api/v1/")) return rest(world, req, res, path.slice("/api/v1".length), url.searchParams);
      return send(res, 404, { message: "not found" });
    };
    handle().catch((err) => send(res, 500, { message: String(err) }));
  });
  await new Promise<void>((resolve) => server.listen(opts.port ?? 0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: base,
    server,
    worlds,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
