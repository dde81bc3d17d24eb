/**
 * The fake GitHub as an HTTP server on loopback. Worlds are independent GitHubs:
 *
 *   POST /_fake/worlds                     → {id, url, ghes_url}   a new world
 *   {world}/…                              GitHub REST (api.github.com style)
 *   {world}/api/v3/…                       the same world as a GHES
 *   {world}/_fake/seed          POST       add apps, installations, PATs, accounts, runners, hooks, jobs
 *   {world}/_fake/state         GET        runners, hooks, tokens, pending faults
 *   {world}/_fake/requests      GET|DELETE recorded REST requests (never control calls)
 *   {world}/_fake/faults        POST|DELETE inject faults (see types.ts Fault)
 *   {world}/_fake/clock         POST       {now, freeze?} or {advance_ms}: the fake's clock (freeze: held at now)
 *   {world}/_fake/profile       PUT|GET    GithubProfile: latency and secondary rate limits (profile.ts); {} = off
 *   {world}/_fake/runners/{id}  PATCH      {busy?, status?}
 *   {world}/_fake/jobs          POST       add or replace jobs
 *   {world}/_fake/runner-downloads POST    serve a runner package and list it (SeedRunnerDownload)
 *   {world}/_fake/downloads/{f} GET        the package (bearer temp_download_token), as a runner machine fetches it
 *
 * Playing workflows (see workflows.ts):
 *   {world}/_fake/webhook-delivery           PUT   DeliveryConfig: where signed workflow_job webhooks go → it, with hook_id
 *   {world}/_fake/workflow-jobs              POST  {repository, labels, count?, name?, run_id?} → queued jobs (webhooks sent)
 *   {world}/_fake/workflow-jobs              GET   every played job with its history
 *   {world}/_fake/webhook-deliveries         GET   every workflow_job delivery made (RecordedDelivery)
 *   {world}/_fake/workflow-settle            POST  waits until no delivery is in flight (redeliveries included)
 * GitHub's record of deliveries (see deliveries.ts; the REST side in deliveries-rest.ts):
 *   {world}/_fake/hook-deliveries[?hook_id=N|app_id=N] GET  every delivery in full, newest first
 *   {world}/_fake/hook-deliveries/{id}/attempts        POST an operator's "Redeliver" → 201 the new delivery
 * The runner side (what a runner with JIT files does; the simulator's runners call these):
 *   {world}/_fake/runner-sessions            POST  {agent_id, name, client_id, os?} → online (401 if the JIT identity is wrong)
 *   {world}/_fake/runner-sessions/{id}/acquire  POST  → 200 the job assigned to it, or 204
 *   {world}/_fake/runner-sessions/{id}/complete POST  {job_id, conclusion?} → job completed
 *   {world}/_fake/runner-sessions/{id}       DELETE  the runner goes offline
 *
 * The Actions service (runner scale set API; see actions-service.ts for its routes):
 *   {world}/_fake/actions/state          GET     scale sets, sessions, pending messages, jobs, requests
 *   {world}/_fake/actions/settings       PUT     ActionsServiceSettings (poll wait, token lifetimes)
 *   {world}/_fake/actions/expire-tokens  POST    {admin?, queue?}: tokens issued so far answer 401
 *   {world}/_fake/actions/scalesets/{id} DELETE  GitHub deletes the scale set (as after days idle)
 *   {world}/_fake/actions/scalesets/{id}/messages POST  InjectedMessage → {message_id}: a message of any shape
 *
 * GitHub Apps made through the web pages (the manifest flow; see apps/manifests.ts and
 * apps/installations.ts). Pages are at the world's base URL, the REST side also under /api/v3:
 *   {world}/settings/apps/new?state=S                     POST  form `manifest` → confirm page → 302 redirect_url?code&state
 *   {world}/organizations/{org}/settings/apps/new?state=S POST  the same for an organization-owned App
 *   {world}/settings/apps/{slug}                          GET   the App's page
 *   {world}/app-manifests/{code}/conversions              POST  (REST, no auth) the App with its pem and secrets, once
 *   {world}/apps/{slug}/installations/new[/permissions]   GET   where to install; repositories; button "Install"
 *   {world}/apps/{slug}/installations                     POST  the installation → `installation` webhook, 302 setup_url
 *   {world}/settings/installations/{id}                   GET   the installation's page
 *   {world}/app, /app/installations, /installation/repositories  GET (REST) the App, its installations, an installation's repositories
 *   {world}/_fake/apps                         GET     Apps made (with secrets), their installations, App event deliveries
 *   {world}/_fake/web-user                     PUT     {login}: who the web pages act as (default octocat)
 *   {world}/_fake/installations/{id}/repositories POST {add?, remove?}: `installation_repositories` added/removed
 *   {world}/_fake/installations/{id}           DELETE  uninstall: `installation` deleted
 *
 * A world lives under /w/{id}; the default world is at the root, for standalone use.
 */

import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { ActionsService } from "./actions-service.ts";
import { appsControl, installationPages } from "./apps/installations.ts";
import { manifestPages } from "./apps/manifests.ts";
import { registryOf } from "./apps/registry.ts";
import { settleDeliveries } from "./deliveries.ts";
import { deliveryControl } from "./deliveries-rest.ts";
import type { DeliveryConfig, Fault, GithubProfile, InjectedMessage, Seed, SeedJob, SeedRunnerDownload, WorldInfo } from "./types.ts";
import { answerWebRoute, type WebAnswer } from "./web-page.ts";
import { WorkflowPlayer } from "./workflows.ts";
import { World } from "./world.ts";

export interface FakeGithub {
  url: string;
  server: Server;
  worlds: Map<string, World>;
  close(): Promise<void>;
}

const MAX_BODY = 1024 * 1024;
const WEB_PAGES = [...manifestPages, ...installationPages];

/** The body: JSON, or for the web pages' forms (application/x-www-form-urlencoded) URLSearchParams. */
async function readBody(req: IncomingMessage): Promise<{ ok: true; value: unknown } | { ok: false }> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY) return { ok: false };
    chunks.push(chunk as Buffer);
  }
  const text = Buffer.concat(chunks).toString("utf8");
  if (req.headers["content-type"]?.startsWith("application/x-www-form-urlencoded")) return { ok: true, value: new URLSearchParams(text) };
  if (!text) return { ok: true, value: undefined };
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false };
  }
}

function sendPage(res: ServerResponse, page: WebAnswer) {
  if ("location" in page) res.writeHead(302, { location: page.location });
  else res.writeHead(page.status, { "content-type": "text/html; charset=utf-8" });
  res.end("html" in page ? page.html : "");
}

function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) {
  const payload = status === 204 || body === null || body === undefined ? "" : JSON.stringify(body);
  res.writeHead(status, {
    ...(payload && { "content-type": "application/json; charset=utf-8" }),
    "x-github-media-type": "github.v3; format=json",
    "x-github-request-id": crypto.randomUUID().slice(0, 18).toUpperCase(),
    ...headers,
  });
  res.end(payload);
}

export async function startFakeGithub(options: { port?: number; host?: string } = {}): Promise<FakeGithub> {
  const host = options.host ?? "127.0.0.1";
  const worlds = new Map<string, World>([["", new World("")]]);
  const players = new Map<World, WorkflowPlayer>();
  const services = new Map<World, ActionsService>();
  const actionsOf = (w: World) => {
    let a = services.get(w);
    if (!a) {
      a = new ActionsService(w);
      services.set(w, a);
    }
    return a;
  };
  const playerOf = (w: World) => {
    let p = players.get(w);
    if (!p) {
      p = new WorkflowPlayer(w, actionsOf(w));
      players.set(w, p);
    }
    return p;
  };
  let origin = "";

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
      const body = await readBody(req);
      if (!body.ok) return send(res, 400, { message: "Problems parsing JSON", documentation_url: "https://docs.github.com/rest" });

      if (!wm && path === "/_fake/worlds" && req.method === "POST") {
        const id = crypto.randomUUID().replaceAll("-", "").slice(0, 16);
        worlds.set(id, new World(id));
        const info: WorldInfo = { id, url: `${origin}/w/${id}`, ghes_url: `${origin}/w/${id}/api/v3` };
        return send(res, 201, info);
      }
      const world = worlds.get(worldId);
      if (!world) return send(res, 404, { message: `fake: no world '${worldId}'` });
      const worldBase = worldId ? `${origin}/w/${worldId}` : origin;

      const dl = /^\/_fake\/downloads\/([^/]+)$/.exec(path);
      if (dl && req.method === "GET") {
        const out = world.download(decodeURIComponent(dl[1]!), req.headers.authorization);
        res.writeHead(out.status, { "content-type": out.status === 200 ? "application/octet-stream" : "text/plain" });
        return res.end(out.body);
      }
      if (path.startsWith("/_fake/")) return await control(world, req.method ?? "GET", path, body.value, res, worldBase, url.searchParams);
      const form = body.value instanceof URLSearchParams ? body.value : new URLSearchParams();
      const webReq = { method: req.method ?? "GET", path, query: url.searchParams, form, base: worldBase };
      const page = await answerWebRoute(WEB_PAGES, world, webReq);
      if (page) return sendPage(res, page);

      const headers: Record<string, string | undefined> = {};
      for (const [k, v] of Object.entries(req.headers)) headers[k] = Array.isArray(v) ? v.join(", ") : v;
      const actions = actionsOf(world);
      if (actions.handles(path)) {
        playerOf(world); // jobs queued from now on reach the service's queues
        const out = await actions.handle(
          req.method ?? "GET",
          path.replace(/^\/api\/v3(?=\/actions\/)/, ""),
          Object.fromEntries(url.searchParams),
          headers,
          body.value,
          worldBase,
        );
        res.writeHead(out.status, { "x-github-request-id": crypto.randomUUID().slice(0, 18).toUpperCase(), ...out.headers });
        return res.end(out.text);
      }
      const answer = await world.handle({
        method: req.method ?? "GET",
        path,
        query: Object.fromEntries(url.searchParams),
        headers,
        body: body.value,
        baseUrl: worldBase,
      });
      send(res, answer.status, answer.body, answer.headers);
    } catch (err) {
      send(res, 500, { message: `fake: ${err instanceof Error ? err.message : String(err)}` });
    }
  });

  async function control(
    world: World,
    method: string,
    path: string,
    body: unknown,
    res: ServerResponse,
    worldBase: string,
    query: URLSearchParams,
  ) {
    const b = (body ?? {}) as Record<string, unknown>;
    if (path === "/_fake/seed" && method === "POST") {
      await world.seed(b as Seed);
      return send(res, 204, null);
    }
    if (path === "/_fake/state" && method === "GET") return send(res, 200, world.dump());
    if (path === "/_fake/profile" && method === "PUT") {
      world.setProfile(body === undefined ? null : (b as GithubProfile));
      return send(res, 200, world.limits?.profile ?? {});
    }
    if (path === "/_fake/profile" && method === "GET") return send(res, 200, world.limits?.profile ?? {});
    if (path === "/_fake/requests" && method === "GET") return send(res, 200, world.requests);
    if (path === "/_fake/requests" && method === "DELETE") {
      world.requests = [];
      return send(res, 204, null);
    }
    if (path === "/_fake/faults" && method === "POST") {
      const faults = (Array.isArray(body) ? body : [body]) as Fault[];
      world.faults.push(...faults);
      return send(res, 204, null);
    }
    if (path === "/_fake/faults" && method === "DELETE") {
      world.faults = [];
      return send(res, 204, null);
    }
    if (path === "/_fake/clock" && method === "POST") {
      if (typeof b.now === "number") world.setNow(b.now, b.freeze === true);
      if (typeof b.advance_ms === "number") world.advance(b.advance_ms);
      return send(res, 200, { now: world.now() });
    }
    if (path === "/_fake/runner-downloads" && method === "POST") {
      return send(res, 201, await world.addRunnerPackage(b as unknown as SeedRunnerDownload, worldBase));
    }
    if (path === "/_fake/jobs" && method === "POST") {
      for (const j of (Array.isArray(body) ? body : [body]) as SeedJob[]) world.putJob(j);
      return send(res, 204, null);
    }
    const actions = actionsOf(world);
    if (path === "/_fake/actions/state" && method === "GET") return send(res, 200, actions.state());
    if (path === "/_fake/actions/settings" && method === "PUT") {
      for (const k of ["poll_wait_ms", "admin_token_ttl_s", "queue_token_ttl_s"] as const)
        if (typeof b[k] === "number") actions.settings[k] = b[k];
      return send(res, 200, actions.settings);
    }
    if (path === "/_fake/actions/expire-tokens" && method === "POST") {
      actions.expireTokens({ admin: b.admin === true, queue: b.queue === true });
      return send(res, 204, null);
    }
    const injected = /^\/_fake\/actions\/scalesets\/(\d+)\/messages$/.exec(path);
    if (injected && method === "POST") {
      const messageId = actions.inject(Number(injected[1]), b as InjectedMessage);
      return messageId === null ? send(res, 404, { message: "fake: no such scale set" }) : send(res, 201, { message_id: messageId });
    }
    const ss = /^\/_fake\/actions\/scalesets\/(\d+)$/.exec(path);
    if (ss && method === "DELETE")
      return actions.deleteScaleSet(Number(ss[1])) ? send(res, 204, null) : send(res, 404, { message: "fake: no such scale set" });
    const player = playerOf(world);
    const reply = (out: { status: number; body: unknown }) => send(res, out.status, out.body);
    if (path === "/_fake/webhook-delivery" && method === "PUT") {
      if (typeof b.url !== "string" || typeof b.secret !== "string")
        return send(res, 400, { message: "fake: url and secret are required" });
      if (b.scope !== undefined && typeof b.scope !== "string") return send(res, 400, { message: "fake: scope must be a string" });
      const p = b.drop_probability;
      if (p !== undefined && (typeof p !== "number" || p < 0 || p > 1))
        return send(res, 400, { message: "fake: drop_probability must be a number from 0 to 1" });
      if (b.timeout_ms !== undefined && (typeof b.timeout_ms !== "number" || b.timeout_ms <= 0))
        return send(res, 400, { message: "fake: timeout_ms must be a positive number" });
      const problem = player.configure(b as unknown as DeliveryConfig);
      if (problem) return send(res, 400, { message: `fake: ${problem}` });
      return send(res, 200, player.configured());
    }
    if (path === "/_fake/workflow-jobs" && method === "POST") {
      if (typeof b.repository !== "string" || !Array.isArray(b.labels))
        return send(res, 400, { message: "fake: repository and labels are required" });
      if (b.run_id !== undefined && !(Number.isSafeInteger(b.run_id) && (b.run_id as number) > 0))
        return send(res, 400, { message: "fake: run_id must be a positive integer" });
      return send(res, 201, player.queue(b as { repository: string; labels: string[]; count?: number; name?: string; run_id?: number }));
    }
    if (path === "/_fake/workflow-jobs" && method === "GET") return send(res, 200, [...player.jobs.values()]);
    if (path === "/_fake/webhook-deliveries" && method === "GET") return send(res, 200, player.deliveries);
    if (path === "/_fake/workflow-settle" && method === "POST") {
      await player.settle();
      await registryOf(world).settle();
      await settleDeliveries(world);
      return send(res, 204, null);
    }
    if (path === "/_fake/runner-sessions" && method === "POST") return reply(player.connect(b));
    const rs = /^\/_fake\/runner-sessions\/(\d+)(?:\/(acquire|complete))?$/.exec(path);
    if (rs && rs[2] === "acquire" && method === "POST") return reply(player.acquire(Number(rs[1])));
    if (rs && rs[2] === "complete" && method === "POST")
      return reply(player.complete(Number(rs[1]), Number(b.job_id), typeof b.conclusion === "string" ? b.conclusion : undefined));
    if (rs && !rs[2] && method === "DELETE") return reply(player.disconnect(Number(rs[1])));
    const rm = /^\/_fake\/runners\/(\d+)$/.exec(path);
    if (rm && method === "PATCH") {
      const r = world.runners.get(Number(rm[1]));
      if (!r) return send(res, 404, { message: "fake: no such runner" });
      if (typeof b.busy === "boolean") r.busy = b.busy;
      if (b.status === "online" || b.status === "offline") r.status = b.status;
      return send(res, 200, r);
    }
    const recorded = await deliveryControl(world, method, path, query);
    if (recorded) return send(res, recorded.status, recorded.body);
    const apps = appsControl(world, method, path, body, worldBase);
    if (apps) return send(res, apps.status, apps.body);
    return send(res, 404, { message: `fake: no control route ${method} ${path}` });
  }

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  origin = `http://${host}:${port}`;
  return {
    url: origin,
    server,
    worlds,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
