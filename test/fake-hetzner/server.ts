// Over the house's ~400 lines (~530) on purpose: one route table for the whole fake API, each route a
// few lines over the project state; the shapes (api-shapes.ts), labels and control API live apart.
/**
 * A fake Hetzner Cloud API (https://docs.hetzner.cloud/reference/cloud), in Node, for the
 * Hetzner shim's tests and end-to-end runs. It speaks the real wire format for the calls the
 * shim makes (the trimmed description is test/fixtures/hetzner/cloud-openapi-trimmed.json):
 *
 *   GET    /v1/servers?name=&label_selector=&page=&per_page=   {servers, meta: {pagination}}
 *   POST   /v1/servers                                          201 {server, action, next_actions, root_password}
 *   GET    /v1/servers/{id}                                     {server}
 *   DELETE /v1/servers/{id}                                     {action}
 *   POST   /v1/servers/{id}/actions/poweron|poweroff|shutdown   201 {action}
 *   GET    /v1/servers/{id}/actions                             {actions, meta}
 *   GET    /v1/actions/{id}                                     {action}
 *   GET    /v1/server_types?name=&page=&per_page=               {server_types, meta: {pagination}}, 5 a page at most
 *
 * Errors are {error: {code, message, details}}; every answer carries RateLimit-Limit,
 * RateLimit-Remaining and RateLimit-Reset; requests need `Authorization: Bearer <token>` of a
 * project. Servers go initializing → running, stopping → off, deleting → gone on timers.
 *
 * Control API (no auth), one project per test file:
 *   POST   /_control/projects                  {config?} → HetznerProject {id, token}
 *   GET    /_control/projects/{p}/servers      every server, deleted ones too
 *   POST   /_control/projects/{p}/servers      seed one (a server the shim did not make)
 *   GET    /_control/projects/{p}/requests     calls received, oldest first
 *   PUT    /_control/projects/{p}/faults       HetznerFaults (replaces)
 *   PATCH  /_control/projects/{p}/config       HetznerProjectConfig (merges; `server_types` replaces the table of server-types.ts)
 *   POST   /_control/projects/{p}/reset        forget servers, actions, requests, faults; refill the rate limit
 */
// Over the house's ~400 lines (~520) on purpose: one fake API and its control API over the same
// projects, like test/fake-ec2/server.ts; the server's JSON shape and the label selector are files of their own.
import { randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { apiServer, LOCATIONS } from "./api-shapes.ts";
import { parseLabelSelector } from "./label-selector.ts";
import { paginate } from "./pagination.ts";
import { FAKE_SERVER_TYPES, fakeServerType } from "./server-types.ts";
import type { CallFault, FakeServer, HetznerFaults, HetznerProject, HetznerProjectConfig, RecordedHetznerRequest } from "./types.ts";

export type * from "./types.ts";

export interface FakeHetznerHooks {
  booted?(project: string, server: FakeServer, firstBoot: boolean): void;
  stopped?(project: string, server: FakeServer): void;
}

export interface FakeHetzner {
  url: string;
  /** A project created at start, for `npm run fake-hetzner`. */
  project: HetznerProject;
  stop(): Promise<void>;
}

interface Action {
  id: number;
  command: string;
  status: "running" | "success" | "error";
  progress: number;
  started: string;
  finished: string | null;
  resources: { id: number; type: string }[];
  error: { code: string; message: string } | null;
}

interface Project extends HetznerProject {
  config: HetznerProjectConfig;
  faults: HetznerFaults;
  servers: Map<number, FakeServer>;
  actions: Map<number, Action>;
  requests: RecordedHetznerRequest[];
  booted: Set<number>;
  tokens: number;
  refilledAt: number;
  timers: Set<NodeJS.Timeout>;
}

/** Hetzner's HTTP status per error code (https://docs.hetzner.cloud/reference/cloud#errors). */
const STATUS: Record<string, number> = {
  unauthorized: 401,
  forbidden: 403,
  token_readonly: 403,
  invalid_input: 400,
  json_error: 400,
  not_found: 404,
  locked: 423,
  rate_limit_exceeded: 429,
  resource_limit_exceeded: 403,
  resource_unavailable: 403,
  placement_error: 412,
  uniqueness_error: 409,
  conflict: 409,
  service_error: 503,
  maintenance: 503,
  unavailable: 503,
  protected: 403,
};

// RFC 1123 hostname, as Hetzner requires of server names.
const NAME = /^(?=.{1,63}$)[a-zA-Z0-9]([a-zA-Z0-9-]*[a-zA-Z0-9])?(\.[a-zA-Z0-9]([a-zA-Z0-9-]*[a-zA-Z0-9])?)*$/;
const LABEL_VALUE = /^(|[a-z0-9A-Z]|[a-z0-9A-Z][a-z0-9A-Z._-]{0,61}[a-z0-9A-Z])$/;
const LABEL_KEY = /^([a-z0-9A-Z.-]{1,253}\/)?([a-z0-9A-Z]|[a-z0-9A-Z][a-z0-9A-Z._-]{0,61}[a-z0-9A-Z])$/;
const USER_DATA_LIMIT = 32 * 1024;
const SERVER_TYPES_PAGE = 5;

class ApiError extends Error {
  readonly code: string;
  readonly details: unknown;
  constructor(code: string, message: string, details: unknown = null) {
    super(message);
    this.code = code;
    this.details = details;
  }
}

const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z");
let nextId = 1_000_000;

export async function startFakeHetzner(opts: { port?: number; hooks?: FakeHetznerHooks } = {}): Promise<FakeHetzner> {
  const projects = new Map<string, Project>();
  const byToken = new Map<string, Project>();

  function newProject(config: HetznerProjectConfig = {}): Project {
    const p: Project = {
      id: `p${projects.size + 1}-${randomBytes(3).toString("hex")}`,
      token: randomBytes(32).toString("base64url"),
      config,
      faults: {},
      servers: new Map(),
      actions: new Map(),
      requests: [],
      booted: new Set(),
      tokens: config.rate_limit ?? 3600,
      refilledAt: Date.now(),
      timers: new Set(),
    };
    projects.set(p.id, p);
    byToken.set(p.token, p);
    return p;
  }

  const later = (p: Project, ms: number, fn: () => void) => {
    const t = setTimeout(() => {
      p.timers.delete(t);
      fn();
    }, ms);
    p.timers.add(t);
  };

  function action(p: Project, command: string, server: FakeServer, ms: number, done: () => Action["error"]): Action {
    const a: Action = {
      id: nextId++,
      command,
      status: "running",
      progress: 0,
      started: iso(Date.now()),
      finished: null,
      resources: [{ id: server.id, type: "server" }],
      error: null,
    };
    p.actions.set(a.id, a);
    later(p, ms, () => {
      const error = done();
      a.status = error ? "error" : "success";
      a.progress = 100;
      a.error = error;
      a.finished = iso(Date.now());
    });
    return a;
  }

  function boot(p: Project, s: FakeServer) {
    s.status = "running";
    const first = !p.booted.has(s.id);
    p.booted.add(s.id);
    opts.hooks?.booted?.(p.id, s, first);
  }

  function halt(p: Project, s: FakeServer, to: "off" | "deleted") {
    const wasUp = s.status === "running" || s.status === "stopping" || s.status === "deleting";
    if (to === "off") s.status = "off";
    else {
      s.status = "deleting";
      s.deleted = true;
    }
    if (wasUp) opts.hooks?.stopped?.(p.id, s);
  }

  const shown = (p: Project, s: FakeServer) => {
    const type = fakeServerType(s.server_type, p.config.server_types ?? FAKE_SERVER_TYPES);
    return apiServer(s, p.config.architectures?.[s.server_type] ?? type?.architecture ?? "x86", type);
  };
  const liveServers = (p: Project) => [...p.servers.values()].filter((s) => !s.deleted);

  function server(p: Project, raw: string | undefined): FakeServer {
    const id = Number(raw);
    const s = Number.isSafeInteger(id) ? p.servers.get(id) : undefined;
    if (!s || s.deleted) throw new ApiError("not_found", `server with ID '${raw}' not found`);
    return s;
  }

  function invalid(field: string, message: string): never {
    throw new ApiError("invalid_input", `invalid input in field '${field}'`, { fields: [{ name: field, messages: [message] }] });
  }

  function createServer_(p: Project, body: any) {
    if (typeof body !== "object" || body === null) throw new ApiError("json_error", "invalid JSON");
    for (const f of ["name", "server_type", "image"])
      if (typeof body[f] !== "string" || body[f] === "") invalid(f, "Missing data for required field.");
    if (!NAME.test(body.name)) invalid("name", "must be a valid hostname");
    if (body.user_data !== undefined && (typeof body.user_data !== "string" || Buffer.byteLength(body.user_data) > USER_DATA_LIMIT))
      invalid("user_data", "is too long");
    const labels = body.labels ?? {};
    for (const [k, v] of Object.entries(labels)) {
      if (!LABEL_KEY.test(k) || k.startsWith("hetzner.cloud/")) invalid("labels", `invalid label key '${k}'`);
      if (typeof v !== "string" || !LABEL_VALUE.test(v)) invalid("labels", `invalid label value for key '${k}'`);
    }
    const location = body.location ?? "fsn1";
    if (!LOCATIONS[location]) invalid("location", "location not found");
    if (p.config.missing_images?.includes(body.image)) invalid("image", "image not found");
    if (liveServers(p).some((s) => s.name === body.name))
      throw new ApiError("uniqueness_error", "server name is already used", { fields: [{ name: "name" }] });
    const fault = (p.faults.create ?? []).find(
      (f) => (!f.location || f.location === location) && (!f.server_type || f.server_type === body.server_type) && (f.times ?? 1) > 0,
    );
    if (fault) {
      if (fault.times !== undefined) fault.times--;
      throw new ApiError(
        fault.code,
        fault.message ??
          (fault.code === "resource_limit_exceeded"
            ? "server limit exceeded"
            : `server type ${body.server_type} unavailable in ${location}`),
        fault.code === "resource_limit_exceeded" ? { limits: [{ name: "server_limit" }] } : null,
      );
    }
    const id = nextId++;
    const enable_ipv4 = body.public_net?.enable_ipv4 ?? true;
    const s: FakeServer = {
      id,
      name: body.name,
      status: "initializing",
      server_type: body.server_type,
      location,
      image: body.image,
      labels,
      created: iso(Date.now()),
      user_data: body.user_data,
      ssh_keys: body.ssh_keys ?? [],
      firewalls: (body.firewalls ?? []).map((f: { firewall: number }) => f.firewall),
      networks: body.networks ?? [],
      placement_group: body.placement_group ?? null,
      enable_ipv4,
      enable_ipv6: body.public_net?.enable_ipv6 ?? true,
      ipv4: enable_ipv4 ? `198.51.100.${(id % 250) + 1}` : null,
    };
    p.servers.set(id, s);
    const failure = p.faults.create_action_error;
    const fails = failure && (failure.times ?? 1) > 0;
    if (fails && failure.times !== undefined) failure.times--;
    const a = action(p, "create_server", s, p.config.boot_delay_ms ?? 200, () => {
      if (fails) {
        s.status = "off";
        return { code: failure!.code, message: failure!.message ?? "server creation failed" };
      }
      if (!s.deleted) boot(p, s);
      return null;
    });
    const next = body.start_after_create === false ? [] : [{ ...a, id: nextId++, command: "start_server" }];
    return {
      status: 201,
      body: {
        server: shown(p, s),
        action: a,
        next_actions: next,
        root_password: s.ssh_keys.length ? null : randomBytes(12).toString("base64url"),
      },
    };
  }

  function list(p: Project, url: URL) {
    let servers = liveServers(p);
    const name = url.searchParams.get("name");
    if (name !== null) servers = servers.filter((s) => s.name === name);
    const selector = url.searchParams.get("label_selector");
    if (selector !== null) {
      const match = parseLabelSelector(selector);
      if (!match) invalid("label_selector", "invalid label selector");
      servers = servers.filter((s) => match(s.labels));
    }
    servers.sort((a, b) => a.id - b.id);
    const paged = paginate(servers, url.searchParams, p.config.page_size);
    if ("field" in paged) invalid(paged.field, paged.message);
    return { status: 200, body: { servers: paged.page.map((s) => shown(p, s)), meta: paged.meta } };
  }

  /** The server types, a few a page whatever per_page asks, so that a reader's paging is always exercised. */
  function serverTypes(p: Project, url: URL) {
    const name = url.searchParams.get("name");
    const types = (p.config.server_types ?? FAKE_SERVER_TYPES).filter((t) => name === null || t.name === name);
    const paged = paginate(types, url.searchParams, Math.min(SERVER_TYPES_PAGE, p.config.page_size ?? SERVER_TYPES_PAGE));
    if ("field" in paged) invalid(paged.field, paged.message);
    return { status: 200, body: { server_types: paged.page, meta: paged.meta } };
  }

  function power(p: Project, s: FakeServer, verb: string) {
    const ms = p.config.stop_delay_ms ?? 200;
    if (verb === "poweron") {
      const a = action(p, "start_server", s, ms, () => {
        if (!s.deleted && (s.status === "off" || s.status === "starting")) boot(p, s);
        return null;
      });
      if (s.status === "off") s.status = "starting";
      return a;
    }
    const a = action(p, verb === "shutdown" ? "shutdown_server" : "stop_server", s, ms, () => {
      if (!s.deleted && s.status !== "off") halt(p, s, "off");
      return null;
    });
    if (s.status === "running") s.status = "stopping";
    return a;
  }

  function api(p: Project, method: string, url: URL, body: unknown): { status: number; body: unknown } {
    const seg = url.pathname.split("/").filter(Boolean).slice(1);
    if (seg[0] === "servers") {
      if (seg.length === 1 && method === "GET") return list(p, url);
      if (seg.length === 1 && method === "POST") return createServer_(p, body);
      const s = server(p, seg[1]);
      if (seg.length === 2 && method === "GET") return { status: 200, body: { server: shown(p, s) } };
      if (seg.length === 2 && method === "DELETE") {
        s.deleted = true;
        const a = action(p, "delete_server", s, p.config.stop_delay_ms ?? 200, () => null);
        halt(p, s, "deleted");
        return { status: 200, body: { action: a } };
      }
      if (seg.length === 3 && seg[2] === "actions" && method === "GET") {
        const actions = [...p.actions.values()].filter((a) => a.resources.some((r) => r.id === s.id));
        return {
          status: 200,
          body: {
            actions,
            meta: {
              pagination: { page: 1, per_page: 25, previous_page: null, next_page: null, last_page: 1, total_entries: actions.length },
            },
          },
        };
      }
      if (seg.length === 4 && seg[2] === "actions" && method === "POST" && ["poweron", "poweroff", "shutdown"].includes(seg[3]!))
        return { status: 201, body: { action: power(p, s, seg[3]!) } };
    }
    if (seg[0] === "server_types" && seg.length === 1 && method === "GET") return serverTypes(p, url);
    if (seg[0] === "actions" && seg.length === 2 && method === "GET") {
      const a = p.actions.get(Number(seg[1]));
      if (!a) throw new ApiError("not_found", `action with ID '${seg[1]}' not found`);
      return { status: 200, body: { action: a } };
    }
    throw new ApiError("not_found", `no route ${method} ${url.pathname}`);
  }

  /** Hetzner's bucket: `rate_limit` requests, refilled gradually (1 a second by default). */
  function rateLimit(p: Project, now: number) {
    const limit = p.config.rate_limit ?? 3600;
    const perSecond = p.config.refill_per_second ?? limit / 3600;
    p.tokens = Math.min(limit, p.tokens + ((now - p.refilledAt) / 1000) * perSecond);
    p.refilledAt = now;
    const ok = p.tokens >= 1;
    if (ok) p.tokens -= 1;
    const reset = Math.ceil(now / 1000 + (limit - p.tokens) / perSecond);
    return {
      ok,
      headers: { "RateLimit-Limit": String(limit), "RateLimit-Remaining": String(Math.floor(p.tokens)), "RateLimit-Reset": String(reset) },
    };
  }

  function callFault(p: Project, method: string, path: string): CallFault | undefined {
    const f = (p.faults.calls ?? []).find(
      (c) => (!c.method || c.method === method) && (!c.path || path.startsWith(c.path)) && (c.times ?? 1) > 0,
    );
    if (f && f.times !== undefined) f.times--;
    return f;
  }

  const send = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
    res.writeHead(status, { "content-type": "application/json", ...headers });
    res.end(body === undefined ? "" : JSON.stringify(body));
  };
  const errorBody = (code: string, message: string, details: unknown = null) => ({ error: { code, message, details } });

  async function handleApi(req: IncomingMessage, res: ServerResponse, url: URL, raw: string) {
    const method = req.method ?? "GET";
    const auth = /^Bearer (\S+)$/.exec(req.headers.authorization ?? "");
    const p = auth ? byToken.get(auth[1]!) : undefined;
    if (!p) return send(res, 401, errorBody("unauthorized", "unable to authenticate"));
    const path = url.pathname.replace(/^\/v1/, "");
    const record = (status: number, code: string | null, body: unknown, answer: unknown) =>
      p.requests.push({ at: Date.now(), method, path: path + url.search, body, status, error_code: code, answer: structuredClone(answer) });
    let body: unknown;
    if (raw) {
      try {
        body = JSON.parse(raw);
      } catch {
        const answer = errorBody("json_error", "invalid JSON");
        record(400, "json_error", raw, answer);
        return send(res, 400, answer);
      }
    }
    const delay = p.faults.latency_ms?.[method] ?? p.faults.latency_ms?.["*"];
    if (delay) await new Promise((r) => setTimeout(r, delay));
    const limit = rateLimit(p, Date.now());
    if (!limit.ok) {
      const answer = errorBody("rate_limit_exceeded", "limit of requests per hour reached");
      record(429, "rate_limit_exceeded", body, answer);
      return send(res, 429, answer, limit.headers);
    }
    const fault = callFault(p, method, path);
    if (fault) {
      const status = fault.status ?? STATUS[fault.code] ?? 500;
      const answer = errorBody(fault.code, fault.message ?? fault.code);
      record(status, fault.code, body, answer);
      return send(res, status, answer, limit.headers);
    }
    if (p.config.read_only && method !== "GET") {
      const answer = errorBody("token_readonly", "the token is only allowed to perform GET requests");
      record(403, "token_readonly", body, answer);
      return send(res, 403, answer, limit.headers);
    }
    try {
      const out = api(p, method, url, body);
      record(out.status, null, body, out.body);
      send(res, out.status, out.body, limit.headers);
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      const status = STATUS[err.code] ?? 400;
      const answer = errorBody(err.code, err.message, err.details);
      record(status, err.code, body, answer);
      send(res, status, answer, limit.headers);
    }
  }

  function control(req: IncomingMessage, res: ServerResponse, seg: string[], raw: string) {
    const method = req.method ?? "GET";
    const body = raw ? JSON.parse(raw) : {};
    if (seg.length === 0 && method === "POST") {
      const p = newProject(body.config ?? {});
      return send(res, 201, { id: p.id, token: p.token });
    }
    const p = projects.get(seg[0] ?? "");
    if (!p) return send(res, 404, { error: "no such project" });
    const what = seg[1];
    if (what === "servers" && method === "GET") return send(res, 200, [...p.servers.values()]);
    if (what === "servers" && method === "POST") {
      const id = nextId++;
      const s: FakeServer = {
        id,
        name: body.name ?? `seeded-${id}`,
        status: body.status ?? "running",
        server_type: body.server_type ?? "cx22",
        location: body.location ?? "fsn1",
        image: body.image ?? "ubuntu-24.04",
        labels: body.labels ?? {},
        created: iso(Date.now()),
        ssh_keys: [],
        firewalls: [],
        networks: [],
        placement_group: null,
        enable_ipv4: true,
        enable_ipv6: true,
        ipv4: `203.0.113.${(id % 250) + 1}`,
      };
      p.servers.set(id, s);
      return send(res, 201, s);
    }
    if (what === "requests" && method === "GET") return send(res, 200, p.requests);
    if (what === "faults" && method === "PUT") {
      p.faults = body;
      return send(res, 204, undefined);
    }
    if (what === "config" && method === "PATCH") {
      p.config = { ...p.config, ...body };
      if (body.rate_limit !== undefined) p.tokens = body.rate_limit;
      return send(res, 204, undefined);
    }
    if (what === "reset" && method === "POST") {
      for (const t of p.timers) clearTimeout(t);
      p.timers.clear();
      for (const s of p.servers.values()) if (!s.deleted && s.status === "running") opts.hooks?.stopped?.(p.id, s);
      p.servers.clear();
      p.actions.clear();
      p.requests = [];
      p.faults = {};
      p.booted.clear();
      p.tokens = p.config.rate_limit ?? 3600;
      p.refilledAt = Date.now();
      return send(res, 204, undefined);
    }
    send(res, 404, { error: `no control route ${method} /${seg.join("/")}` });
  }

  const http = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const raw = Buffer.concat(chunks).toString("utf8");
      const url = new URL(req.url ?? "/", "http://fake-hetzner");
      const seg = url.pathname.split("/").filter(Boolean);
      const done =
        seg[0] === "_control" && seg[1] === "projects"
          ? Promise.resolve(control(req, res, seg.slice(2), raw))
          : seg[0] === "v1"
            ? handleApi(req, res, url, raw)
            : Promise.resolve(send(res, 404, errorBody("not_found", "not found")));
      done.catch((err) => {
        if (!res.headersSent) send(res, 500, errorBody("service_error", String(err)));
      });
    });
  });
  await new Promise<void>((r) => http.listen(opts.port ?? 0, "127.0.0.1", r));
  const url = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
  const first = newProject();
  return {
    url,
    project: { id: first.id, token: first.token },
    async stop() {
      for (const p of projects.values()) for (const t of p.timers) clearTimeout(t);
      http.closeAllConnections();
      await new Promise<void>((r) => http.close(() => r()));
    },
  };
}
