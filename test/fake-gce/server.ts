/**
 * A fake Google Compute Engine for tests and local end-to-end runs: a Node HTTP server on
 * 127.0.0.1 that speaks Compute Engine's v1 REST API (JSON bodies; errors as
 * {error:{code, message, errors:[{message, domain, reason}]}}) for the calls a runner shim makes
 * — instances.insert/get/list/aggregatedList/delete/start/stop, zoneOperations.get/wait,
 * machineTypes.list (./machine-type-list.ts) — behind Google's OAuth2 token endpoint for
 * service accounts (an RS256 JWT grant verified against the account's public key, ./oauth.ts). Paths and shapes follow the discovery document
 * (test/fixtures/gce/compute-v1-trimmed.json; test/contract/gce-discovery.test.ts).
 *
 * One server hosts many projects, each with its own service account key, instances, faults and
 * request log, so parallel test files never see each other. The compute API is under
 * /compute/v1/ (give the shim GCE_ENDPOINT={url}/compute/v1/), the token endpoint is {url}/token
 * (the key file's token_uri).
 *
 * Control API (unauthenticated; loopback only), JSON in and out:
 *   POST   /_control/projects                  {config?} → {id, service_account_key}
 *   GET    /_control/projects/{p}/instances    every instance
 *   POST   /_control/projects/{p}/instances    seed one {zone, name, labels?, status?, …}: an instance the shim did not make
 *   PATCH  /_control/projects/{p}/instances/{zone}/{name}  change an instance's fields
 *   GET    /_control/projects/{p}/requests     calls received, oldest first
 *   PUT    /_control/projects/{p}/faults       GceFaults (replaces)
 *   PATCH  /_control/projects/{p}/config       GceProjectConfig (merges)
 *   POST   /_control/projects/{p}/reset        forget instances, operations, requests and faults
 *   POST   /_control/projects/{p}/revoke-tokens  every access token issued so far answers 401 from now on
 */
import { randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { FakeProject, fail, GceFailure, type ProjectHooks } from "./compute.ts";
import { machineTypeList } from "./machine-type-list.ts";
import { newServiceAccountKey, verifyAssertion } from "./oauth.ts";
import type { GceFaults, GceInstance, GceProject, GceProjectConfig } from "./types.ts";

export type { ProjectHooks as FakeGceHooks } from "./compute.ts";
export type * from "./types.ts";

export interface FakeGce {
  url: string;
  /** A project made at start, for single-user runs (npm run fake-gce). */
  project: GceProject;
  stop(): Promise<void>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const STATUS_TEXT: Record<number, string> = {
  400: "INVALID_ARGUMENT",
  401: "UNAUTHENTICATED",
  403: "PERMISSION_DENIED",
  404: "NOT_FOUND",
  409: "ALREADY_EXISTS",
  429: "RESOURCE_EXHAUSTED",
  500: "INTERNAL",
  503: "UNAVAILABLE",
};
const DOMAIN: Record<string, string> = {
  rateLimitExceeded: "usageLimits",
  userRateLimitExceeded: "usageLimits",
  quotaExceeded: "usageLimits",
};

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => resolve(Buffer.concat(chunks)));
    req.on("error", reject);
  });
}

function json(res: ServerResponse, status: number, body?: unknown) {
  res.writeHead(status, body === undefined ? {} : { "content-type": "application/json; charset=UTF-8" });
  res.end(body === undefined ? undefined : JSON.stringify(body));
}

const errorBody = (e: GceFailure) => ({
  error: {
    code: e.status,
    message: e.message,
    errors: [{ message: e.message, domain: DOMAIN[e.reason] ?? "global", reason: e.reason }],
    ...(STATUS_TEXT[e.status] ? { status: STATUS_TEXT[e.status] } : {}),
  },
});

/** The discovery method id of a compute path (after /compute/v1/projects/{p}/), with its path parameters. */
function route(method: string, rest: string[]): { id: string; zone: string | null; name?: string } | null {
  if (rest[0] === "aggregated" && rest[1] === "instances" && rest.length === 2 && method === "GET")
    return { id: "compute.instances.aggregatedList", zone: null };
  if (rest[0] !== "zones" || !rest[1]) return null;
  const zone = rest[1];
  const [kind, name, verb, extra] = rest.slice(2);
  if (kind === "instances") {
    if (name === undefined)
      return method === "POST"
        ? { id: "compute.instances.insert", zone }
        : method === "GET"
          ? { id: "compute.instances.list", zone }
          : null;
    if (verb === undefined)
      return method === "GET"
        ? { id: "compute.instances.get", zone, name }
        : method === "DELETE"
          ? { id: "compute.instances.delete", zone, name }
          : null;
    if ((verb === "start" || verb === "stop") && extra === undefined && method === "POST")
      return { id: `compute.instances.${verb}`, zone, name };
    return null;
  }
  if (kind === "machineTypes" && name === undefined && method === "GET") return { id: "compute.machineTypes.list", zone };
  if (kind === "operations" && name) {
    if (verb === undefined && method === "GET") return { id: "compute.zoneOperations.get", zone, name };
    if (verb === "wait" && method === "POST") return { id: "compute.zoneOperations.wait", zone, name };
  }
  return null;
}

export async function startFakeGce(opts: { port?: number; hooks?: ProjectHooks } = {}): Promise<FakeGce> {
  const projects = new Map<string, FakeProject>();
  const tokens = new Map<string, { project: string; expires: number; scopes: string[] }>();
  let base = "";
  let n = 0;

  function newProject(config: GceProjectConfig = {}): FakeProject {
    const id = `edgerunner-test-${++n}-${randomBytes(3).toString("hex")}`;
    const { key, publicKeyPem } = newServiceAccountKey(id, `${base}/token`);
    const p = new FakeProject(id, key, publicKeyPem, `${base}/compute/v1/`, config, opts.hooks ?? {});
    projects.set(id, p);
    return p;
  }
  const describe = (p: FakeProject): GceProject => ({ id: p.id, service_account_key: p.key });

  async function token(req: IncomingMessage, res: ServerResponse, raw: Buffer) {
    const form = new URLSearchParams(raw.toString("utf8"));
    // The assertion names its issuer: the project whose key must have signed it.
    let project: FakeProject | undefined;
    try {
      const claims = JSON.parse(Buffer.from((form.get("assertion") ?? "").split(".")[1] ?? "", "base64url").toString());
      project = [...projects.values()].find((p) => p.key.client_email === claims.iss);
    } catch {}
    if (!project) return json(res, 400, { error: "invalid_grant", error_description: "Invalid grant: account not found" });
    const record = (status: number, error: string | null) =>
      project!.requests.push({
        at: Date.now(),
        method: "oauth2.token",
        http_method: req.method ?? "",
        path: "/token",
        body: null,
        status,
        error,
        zone: null,
        permissions: [],
      });
    const latency = project.faults.latency_ms["oauth2.token"] ?? 0;
    if (latency) await sleep(latency);
    const f = project.methodFault("oauth2.token");
    if (f) {
      record(f.status, f.reason);
      return json(res, f.status, { error: f.reason, error_description: f.message ?? "injected" });
    }
    const v = verifyAssertion(form, project, Math.floor(Date.now() / 1000));
    if (!v.ok) {
      record(400, v.error);
      return json(res, 400, { error: v.error, error_description: v.description });
    }
    const accessToken = `ya29.fake-${randomBytes(24).toString("base64url")}`;
    tokens.set(accessToken, { project: project.id, expires: Date.now() + project.config.token_ttl_s * 1000, scopes: v.grant.scopes });
    record(200, null);
    json(res, 200, { access_token: accessToken, expires_in: project.config.token_ttl_s, token_type: "Bearer" });
  }

  async function compute(req: IncomingMessage, res: ServerResponse, url: URL, segments: string[], raw: Buffer) {
    const projectId = segments[3] ?? "";
    const r = route(req.method ?? "", segments.slice(4));
    const p = projects.get(projectId);
    let body: unknown = null;
    let status = 200;
    let error: string | null = null;
    const permissions: string[] = [];
    const answer = (s: number, b: unknown) => {
      status = s;
      json(res, s, b);
    };
    try {
      if (!r) throw fail(404, "notFound", `The requested URL ${url.pathname} was not found on this server.`);
      const auth = /^Bearer (.+)$/.exec(req.headers.authorization ?? "");
      const t = auth ? tokens.get(auth[1]!) : undefined;
      if (!t || t.expires < Date.now())
        throw fail(
          401,
          "authError",
          "Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential.",
        );
      if (!t.scopes.some((s) => s === "https://www.googleapis.com/auth/compute" || s === "https://www.googleapis.com/auth/cloud-platform"))
        throw fail(403, "insufficientPermissions", "Request had insufficient authentication scopes.");
      if (!p || t.project !== p.id)
        throw fail(403, "forbidden", `Required 'compute.instances.list' permission for 'projects/${projectId}'`);
      const latency = p.faults.latency_ms[r.id] ?? p.faults.latency_ms["*"] ?? 0;
      if (latency) await sleep(latency);
      const f = p.methodFault(r.id);
      if (f)
        throw fail(
          f.status,
          f.reason,
          f.message ?? (f.status === 429 || f.reason.includes("RateLimit") ? "Rate Limit Exceeded" : `injected ${f.reason}`),
        );
      if (raw.length) {
        try {
          body = JSON.parse(raw.toString("utf8"));
        } catch {
          throw fail(400, "parseError", "This API does not support parsing form-encoded input.");
        }
      }
      // Each method checks its permissions synchronously: this list is this request's.
      p.checked = permissions;
      switch (r.id) {
        case "compute.instances.insert":
          return answer(200, p.insert(r.zone!, (body ?? {}) as GceInstance));
        case "compute.instances.get":
          return answer(200, p.get(r.zone!, r.name!));
        case "compute.instances.delete":
          return answer(200, p.delete(r.zone!, r.name!));
        case "compute.instances.start":
        case "compute.instances.stop":
          return answer(200, p.startStop(r.zone!, r.name!, r.id.endsWith("start") ? "start" : "stop"));
        case "compute.instances.list": {
          const page = p.page(url.searchParams, r.zone);
          return answer(200, {
            kind: "compute#instanceList",
            id: `projects/${p.id}/zones/${r.zone}/instances`,
            items: page.items,
            selfLink: `${p.zoneUrl(r.zone!)}/instances`,
            ...(page.nextPageToken ? { nextPageToken: page.nextPageToken } : {}),
          });
        }
        case "compute.instances.aggregatedList": {
          const page = p.page(url.searchParams, null);
          const items: Record<string, unknown> = {};
          for (const z of p.config.zones) {
            const here = page.items.filter((i) => i.zone.endsWith(`/zones/${z}`));
            items[`zones/${z}`] = here.length
              ? { instances: here }
              : {
                  warning: {
                    code: "NO_RESULTS_ON_PAGE",
                    message: `There are no results for scope 'zones/${z}' on this page.`,
                    data: [{ key: "scope", value: `zones/${z}` }],
                  },
                };
          }
          return answer(200, {
            kind: "compute#instanceAggregatedList",
            id: `projects/${p.id}/aggregated/instances`,
            items,
            selfLink: `${base}/compute/v1/projects/${p.id}/aggregated/instances`,
            ...(page.nextPageToken ? { nextPageToken: page.nextPageToken } : {}),
          });
        }
        case "compute.machineTypes.list":
          return answer(200, machineTypeList(p, r.zone!, url.searchParams));
        case "compute.zoneOperations.get":
          return answer(200, p.operation(r.zone!, r.name!).op);
        case "compute.zoneOperations.wait": {
          const entry = p.operation(r.zone!, r.name!);
          if (entry.op.status !== "DONE")
            await new Promise<void>((resolve) => {
              const t = setTimeout(resolve, p.config.wait_cap_ms);
              entry.waiters.push(() => {
                clearTimeout(t);
                resolve();
              });
            });
          return answer(200, entry.op);
        }
      }
    } catch (err) {
      if (!(err instanceof GceFailure)) throw err;
      error = err.reason;
      answer(err.status, errorBody(err));
    } finally {
      if (p && r)
        p.requests.push({
          at: Date.now(),
          method: r.id,
          http_method: req.method ?? "",
          path: url.pathname + url.search,
          body,
          status,
          error,
          zone: r.zone,
          permissions,
        });
    }
  }

  function control(req: IncomingMessage, res: ServerResponse, parts: string[], raw: Buffer) {
    const body = raw.length ? JSON.parse(raw.toString("utf8")) : {};
    if (parts.length === 0 && req.method === "POST") return json(res, 201, describe(newProject(body.config)));
    const p = projects.get(parts[0] ?? "");
    if (!p) return json(res, 404, { error: "no such project" });
    const [what, zone, name] = parts.slice(1);
    if (what === "instances" && !zone && req.method === "GET") return json(res, 200, [...p.instances.values()]);
    if (what === "instances" && !zone && req.method === "POST") {
      const z = body.zone ?? p.config.zones[0];
      const i: GceInstance = {
        kind: "compute#instance",
        id: String(BigInt(`0x${randomBytes(7).toString("hex")}`)),
        name: body.name,
        zone: p.zoneUrl(z),
        machineType: `${p.zoneUrl(z)}/machineTypes/e2-small`,
        status: "RUNNING",
        creationTimestamp: new Date().toISOString(),
        selfLink: `${p.zoneUrl(z)}/instances/${body.name}`,
        ...body,
      };
      i.zone = p.zoneUrl(z);
      p.instances.set(`${z}/${i.name}`, i);
      return json(res, 201, i);
    }
    if (what === "instances" && zone && name && req.method === "PATCH") {
      const i = p.instances.get(`${zone}/${name}`);
      if (!i) return json(res, 404, { error: "no such instance" });
      Object.assign(i, body);
      return json(res, 200, i);
    }
    if (what === "requests" && req.method === "GET") return json(res, 200, p.requests);
    if (what === "faults" && req.method === "PUT") {
      const f = body as GceFaults;
      p.faults = { insert: f.insert ?? [], methods: f.methods ?? [], latency_ms: f.latency_ms ?? {} };
      return json(res, 204);
    }
    if (what === "config" && req.method === "PATCH") {
      Object.assign(p.config, body);
      return json(res, 204);
    }
    if (what === "revoke-tokens" && req.method === "POST") {
      for (const [token, t] of tokens) if (t.project === p.id) tokens.delete(token);
      return json(res, 204);
    }
    if (what === "reset" && req.method === "POST") {
      p.reset();
      return json(res, 204);
    }
    json(res, 404, { error: "no such control route" });
  }

  const sockets = new Set<Socket>();
  const server = createServer(async (req, res) => {
    try {
      const raw = await readBody(req);
      const url = new URL(req.url ?? "/", "http://fake-gce");
      const segments = url.pathname.split("/").filter(Boolean).map(decodeURIComponent);
      if (segments[0] === "_control" && segments[1] === "projects") return control(req, res, segments.slice(2), raw);
      if (url.pathname === "/token" && req.method === "POST") return await token(req, res, raw);
      if (segments[0] === "compute" && segments[1] === "v1" && segments[2] === "projects")
        return await compute(req, res, url, segments, raw);
      json(res, 404, errorBody(fail(404, "notFound", `The requested URL ${url.pathname} was not found on this server.`)));
    } catch (err) {
      if (!res.headersSent) json(res, 500, errorBody(fail(500, "backendError", (err as Error).message)));
    }
  });
  server.on("connection", (s) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(opts.port ?? 0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const first = newProject();
  return {
    url: base,
    project: describe(first),
    async stop() {
      for (const p of projects.values()) p.reset();
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
