/**
 * A provider shim for tests and local end-to-end runs: a plain Node HTTP server on 127.0.0.1
 * that speaks provider shim protocol v1 exactly (docs/provider-shim-protocol.md; v1.1 and v1.2
 * per tenant, below) and keeps its "cloud" in memory, with knobs to make it slow, failing, lying
 * or silent. Over the house's ~400 lines on purpose (~615): one request handler over one tenant
 * state, read top to bottom as the protocol; the v1.2 rules are ./flavors.ts.
 *
 * One server hosts many independent tenants, each a separate fake cloud with its own secret,
 * state and faults, at `{server}/t/{tenant}` — so parallel test files never see each other,
 * and every call exercises a provider URL with a base path.
 *
 * Signatures are checked and made with node:crypto, independently of src/providers/shim-signing.ts,
 * so the tests cross-check the coordinator's signing against a second implementation.
 *
 * Control API (unsigned; loopback only), JSON in and out:
 *   POST   /_control/tenants                         {secret, callback_url?, batch_create_max?, flavors?} → {id, url}
 *   GET    /_control/tenants/{t}/instances           every machine, all pools
 *   POST   /_control/tenants/{t}/instances           seed a machine (an orphan) {pool_id, name, provider_id?, status?}
 *   PATCH  /_control/tenants/{t}/instances/{pid}     change a machine's fields (e.g. status)
 *   DELETE /_control/tenants/{t}/instances/{pid}     make a machine vanish behind the coordinator's back
 *   GET    /_control/tenants/{t}/requests            protocol requests received, oldest first
 *   PUT    /_control/tenants/{t}/faults              {latency_ms?: {op: ms}, rules?: FaultRule[]} (replaces)
 *   POST   /_control/tenants/{t}/faults/rules        append one FaultRule
 *   PATCH  /_control/tenants/{t}/faults              {latency_ms: {op: ms}} (merged; the rules stay)
 *   PATCH  /_control/tenants/{t}                     {secret?, callback_url?, batch_create_max?, flavors?} (flavors: null removes it)
 *   GET    /_control/tenants/{t}/callbacks           callbacks made (delivered or waiting in the outbox)
 *   POST   /_control/tenants/{t}/callbacks/take      the outbox's callbacks, marked taken (for the test to deliver)
 *   POST   /_control/tenants/{t}/reset               forget machines, requests, faults and callbacks
 *   …      /_control/{other}/…                       routes of an embedding server (`control` option), e.g. the simulator
 *
 * A fault rule with `probability` answers that share of matching calls, forever unless `times` is set.
 *
 * Protocol v1.1 batch create (`POST /v1/instances:batch`) is offered by a tenant whose
 * `batch_create_max` is set (the server's `batchCreateMax` by default; 0: a v1 shim, which
 * answers the route 404). A batch waits `latency_ms.create_batch` (else `latency_ms.create`)
 * once, as one cloud call launching them all; each instance in it meets the `create` rules.
 *
 * Protocol v1.2 (`GET /v1/flavors`, a shaped create naming a catalogued flavor: ./flavors.ts) is
 * offered by a tenant given a FlavorCatalogue as `flavors` (the server's `flavors` by default;
 * none: the route is 404 and capabilities stay v1 or v1.1). Machines keep the flavor, image and
 * shape they were created with.
 */
import { createHmac, randomUUID, timingSafeEqual } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { BootstrapInstance, type FlavorCatalogue, validateBatchCreate } from "../../src/providers/shim-protocol.ts";
import { readCatalogue, shapedCreateProblem, tenantCapabilities } from "./flavors.ts";
import type { FakeMachine, FaultAction, FaultRule, Faults, RecordedCallback, RecordedRequest, ShimOperation } from "./types.ts";

export type * from "./types.ts";

interface Tenant {
  id: string;
  secret: string;
  callbackUrl: string | null;
  /** The largest batch create offered (0: none, protocol v1). */
  batchCreateMax: number;
  /** The flavor catalogue offered (null: none, before protocol v1.2). */
  flavors: FlavorCatalogue | null;
  machines: Map<string, FakeMachine>;
  requests: RecordedRequest[];
  callbacks: RecordedCallback[];
  faults: Required<Faults>;
}

/** Told when a machine appears or goes (a simulator boots and stops its runners on these). */
export interface MachineHooks {
  created?(tenantId: string, m: FakeMachine): void;
  deleted?(tenantId: string, m: FakeMachine): void;
}

/** Extra unsigned control routes under `/_control/{prefix}/…` (the simulator's own knobs); `query`: the request's query string. */
export type ExtraControl = (
  method: string,
  segments: string[],
  body: unknown,
  query: URLSearchParams,
) => { status: number; body?: unknown } | null;

export interface FakeShim {
  /** Base URL of the server, e.g. http://127.0.0.1:41234 */
  url: string;
  stop(): Promise<void>;
}

const MAX_SKEW_SECONDS = 300;
const MAX_BODY = 1024 * 1024;

const json = (res: ServerResponse, status: number, body?: unknown, headers: Record<string, string> = {}) => {
  if (body === undefined) {
    res.writeHead(status, headers).end();
    return;
  }
  const text = typeof body === "string" ? body : JSON.stringify(body);
  res.writeHead(status, { "content-type": typeof body === "string" ? "text/plain" : "application/json", ...headers }).end(text);
};

function sign(secret: string, ts: string, method: string, path: string, body: Buffer | string): string {
  return "sha256=" + createHmac("sha256", secret).update(`${ts}\n${method}\n${path}\n`).update(body).digest("hex");
}

function signatureValid(secret: string, req: IncomingMessage, path: string, body: Buffer): { ok: boolean; why?: string } {
  const ts = String(req.headers["x-edgerunner-timestamp"] ?? "");
  const sig = String(req.headers["x-edgerunner-signature"] ?? "");
  if (!/^\d+$/.test(ts)) return { ok: false, why: "missing or malformed X-Edgerunner-Timestamp" };
  if (Math.abs(Math.floor(Date.now() / 1000) - Number(ts)) > MAX_SKEW_SECONDS) return { ok: false, why: "timestamp too far from now" };
  const expected = Buffer.from(sign(secret, ts, req.method ?? "", path, body));
  const given = Buffer.from(sig.toLowerCase());
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return { ok: false, why: "bad signature" };
  return { ok: true };
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY) reject(new Error("body too large"));
      else chunks.push(c);
    });
    req.on("end", () => resolve(Buffer.concat(chunks)));
    req.on("error", reject);
  });
}

function parseJson(buf: Buffer): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: buf.length ? JSON.parse(buf.toString("utf8")) : undefined };
  } catch {
    return { ok: false };
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The wire view of a machine: exactly GARM's ProviderInstance fields. */
function providerInstance(m: FakeMachine) {
  return {
    provider_id: m.provider_id,
    name: m.name,
    os_type: m.os_type,
    os_name: m.os_name,
    os_version: m.os_version,
    os_arch: m.os_arch,
    addresses: m.addresses,
    status: m.status,
  };
}

function route(method: string, rest: string): { operation: ShimOperation; id?: string } | null {
  if (rest === "/v1/capabilities" && method === "GET") return { operation: "capabilities" };
  if (rest === "/v1/flavors" && method === "GET") return { operation: "flavors" };
  if (rest === "/v1/instances:batch" && method === "POST") return { operation: "create_batch" };
  if (rest === "/v1/instances") {
    if (method === "POST") return { operation: "create" };
    if (method === "GET") return { operation: "list" };
    if (method === "DELETE") return { operation: "remove_all" };
    return null;
  }
  const m = /^\/v1\/instances\/([^/]+)(\/(start|stop))?$/.exec(rest);
  if (!m) return null;
  const id = decodeURIComponent(m[1]!);
  if (m[3] && method === "POST") return { operation: m[3] as "start" | "stop", id };
  if (m[3]) return null;
  if (method === "GET") return { operation: "get", id };
  if (method === "DELETE") return { operation: "delete", id };
  return null;
}

export async function startFakeShim(
  opts: { port?: number; hooks?: MachineHooks; control?: ExtraControl; batchCreateMax?: number; flavors?: FlavorCatalogue } = {},
): Promise<FakeShim> {
  const tenants = new Map<string, Tenant>();
  const timers = new Set<ReturnType<typeof setTimeout>>();
  const sockets = new Set<Socket>();
  let baseUrl = "";

  const later = (ms: number, fn: () => void | Promise<void>) => {
    const t = setTimeout(() => {
      timers.delete(t);
      void fn();
    }, ms);
    timers.add(t);
  };

  const find = (t: Tenant, poolId: string, id: string) =>
    [...t.machines.values()].find((m) => m.pool_id === poolId && (m.provider_id === id || m.name === id));

  function newMachine(
    t: Tenant,
    poolId: string,
    name: string,
    bootstrap: BootstrapInstance | undefined,
    over: Partial<FakeMachine> = {},
  ): FakeMachine {
    const n = t.machines.size + 1;
    const m: FakeMachine = {
      provider_id: `fake-${randomUUID()}`,
      name,
      pool_id: poolId,
      status: "running",
      os_type: bootstrap?.os_type ?? "linux",
      os_arch: bootstrap?.arch ?? "amd64",
      os_name: "ubuntu",
      os_version: "24.04",
      addresses: [{ address: `10.0.${(n >> 8) & 255}.${n & 255}`, type: "private" }],
      created_at: Date.now(),
      ...(bootstrap ? { bootstrap, flavor: bootstrap.flavor, image: bootstrap.image, shape: bootstrap.shape ?? null } : {}),
      ...over,
    };
    t.machines.set(m.provider_id, m);
    if (bootstrap) opts.hooks?.created?.(t.id, m);
    return m;
  }

  function removeMachine(t: Tenant, m: FakeMachine) {
    t.machines.delete(m.provider_id);
    opts.hooks?.deleted?.(t.id, m);
  }

  /** Makes the callback for an accepted operation, and delivers it or keeps it. */
  async function callback(
    t: Tenant,
    operationId: string,
    instanceName: string,
    mode: "deliver" | "outbox",
    payload: { result: unknown; error: unknown },
  ) {
    const body = JSON.stringify({ operation_id: operationId, instance_name: instanceName, ...payload });
    const url = t.callbackUrl ?? "http://127.0.0.1:1/no-callback-url-configured";
    const path = new URL(url).pathname + new URL(url).search;
    const ts = String(Math.floor(Date.now() / 1000));
    const headers = {
      "content-type": "application/json",
      "x-edgerunner-timestamp": ts,
      "x-edgerunner-signature": sign(t.secret, ts, "POST", path, body),
    };
    const record: RecordedCallback = {
      operation_id: operationId,
      instance_name: instanceName,
      url,
      path,
      headers,
      body,
      state: "outbox",
      response_status: null,
    };
    t.callbacks.push(record);
    if (mode === "outbox") return;
    try {
      const res = await fetch(url, { method: "POST", headers, body, signal: AbortSignal.timeout(10_000) });
      record.state = "delivered";
      record.response_status = res.status;
      await res.arrayBuffer();
    } catch (err) {
      record.state = "failed";
      record.error = err instanceof Error ? err.message : String(err);
    }
  }

  /** Performs a protocol operation on the fake cloud; returns the normal answer. */
  function perform(
    t: Tenant,
    op: ShimOperation,
    poolId: string,
    id: string | undefined,
    body: unknown,
  ): { status: number; body?: unknown } {
    switch (op) {
      case "capabilities":
        return { status: 200, body: tenantCapabilities(t) };
      case "flavors":
        return t.flavors
          ? { status: 200, body: t.flavors }
          : { status: 404, body: { error: "no route GET /v1/flavors (this shim has no flavor catalogue)" } };
      case "create_batch":
        throw new Error("a batch is answered item by item (batchCreate)");
      case "create": {
        const b = body as BootstrapInstance;
        const same = [...t.machines.values()].find((m) => m.name === b.name);
        if (same && same.pool_id !== poolId) return { status: 409, body: { error: `instance name ${b.name} is taken by another pool` } };
        if (same) return { status: 200, body: providerInstance(same) };
        return { status: 201, body: providerInstance(newMachine(t, poolId, b.name, b)) };
      }
      case "get": {
        const m = find(t, poolId, id!);
        return m ? { status: 200, body: providerInstance(m) } : { status: 404, body: { error: "no such instance" } };
      }
      case "delete": {
        const m = find(t, poolId, id!);
        if (!m) return { status: 404, body: { error: "no such instance" } };
        removeMachine(t, m);
        return { status: 204 };
      }
      case "list":
        return { status: 200, body: [...t.machines.values()].filter((m) => m.pool_id === poolId).map(providerInstance) };
      case "start":
      case "stop": {
        const m = find(t, poolId, id!);
        if (!m) return { status: 404, body: { error: "no such instance" } };
        m.status = op === "start" ? "running" : "stopped";
        return { status: 204 };
      }
      case "remove_all":
        for (const m of [...t.machines.values()]) if (m.pool_id === poolId) removeMachine(t, m);
        return { status: 204 };
    }
  }

  function startAsync(
    t: Tenant,
    op: ShimOperation,
    poolId: string,
    id: string | undefined,
    body: unknown,
    action: Extract<FaultAction, { type: "async" }>,
  ) {
    const operationId = `op-${randomUUID()}`;
    const name = op === "create" ? (body as BootstrapInstance).name : (find(t, poolId, id!)?.name ?? id!);
    const completeAfter = action.complete_after_ms ?? 0;
    const mode = action.callback ?? "deliver";
    let payload: { result: unknown; error: unknown } = { result: null, error: action.fail ?? null };
    later(completeAfter, () => {
      if (action.fail) return;
      const done = perform(t, op, poolId, id, body);
      if (op === "create" && (done.status === 200 || done.status === 201)) {
        const m = find(t, poolId, name)!;
        if (action.status) m.status = action.status;
        payload = { result: providerInstance(m), error: null };
      } else if (op === "create") {
        payload = { result: null, error: { message: JSON.stringify(done.body), retryable: false } };
      }
    });
    if (mode !== "never") later(action.callback_delay_ms ?? completeAfter, () => callback(t, operationId, name, mode, payload));
    return operationId;
  }

  function takeRule(t: Tenant, op: ShimOperation): FaultRule | undefined {
    const i = t.faults.rules.findIndex(
      (r) =>
        r.operation === op &&
        (r.times ?? (r.probability === undefined ? 1 : Infinity)) > 0 &&
        (r.probability === undefined || Math.random() < r.probability),
    );
    if (i < 0) return undefined;
    const rule = t.faults.rules[i]!;
    if (rule.times === undefined && rule.probability !== undefined) return rule;
    rule.times = (rule.times ?? 1) - 1;
    if (rule.times <= 0) t.faults.rules.splice(i, 1);
    return rule;
  }

  async function protocol(t: Tenant, req: IncomingMessage, res: ServerResponse, path: string, rest: string, raw: Buffer) {
    const method = req.method ?? "GET";
    const r = route(method, rest);
    const parsed = parseJson(raw);
    const poolId = typeof req.headers["x-edgerunner-pool-id"] === "string" ? req.headers["x-edgerunner-pool-id"] : null;
    let extraSpecs: unknown = null;
    let extraSpecsOk = true;
    try {
      const h = req.headers["x-edgerunner-pool-extra-specs"];
      extraSpecs = typeof h === "string" ? JSON.parse(Buffer.from(h, "base64").toString("utf8")) : null;
    } catch {
      extraSpecsOk = false;
    }
    const sig = signatureValid(t.secret, req, path, raw);
    const record: RecordedRequest = {
      at: Date.now(),
      operation: r?.operation ?? "unknown",
      method,
      path,
      controller_id: typeof req.headers["x-edgerunner-controller-id"] === "string" ? req.headers["x-edgerunner-controller-id"] : null,
      pool_id: poolId,
      extra_specs: extraSpecs,
      signature_ok: sig.ok,
      body: parsed.ok ? parsed.value : raw.toString("utf8"),
      status: null,
    };
    t.requests.push(record);
    const answer = (status: number, body?: unknown, headers?: Record<string, string>) => {
      record.status = status;
      record.answered_at = Date.now();
      json(res, status, body, headers);
    };

    if (!sig.ok) return answer(401, { error: sig.why });
    if (!r) return answer(404, { error: `no route ${method} ${rest}` });
    if (!poolId || !record.controller_id || !extraSpecsOk || extraSpecs === null) {
      return answer(400, {
        error: "missing or malformed X-Edgerunner-Controller-Id, X-Edgerunner-Pool-Id or X-Edgerunner-Pool-Extra-Specs",
      });
    }
    if (r.operation === "create_batch") return batchCreate(t, poolId, parsed.ok ? parsed.value : undefined, record, answer);
    if (r.operation === "create") {
      if (!parsed.ok) return answer(400, { error: "body is not JSON" });
      const b = BootstrapInstance.safeParse(parsed.value);
      if (!b.success) return answer(400, { error: "invalid BootstrapInstance", details: b.error.issues });
      if (b.data.pool_id !== poolId) return answer(400, { error: "pool_id in the body differs from X-Edgerunner-Pool-Id" });
      const shape = shapedCreateProblem(t.flavors, b.data);
      if (shape) return answer(400, { error: `cannot create ${b.data.name}: ${shape}` });
    }

    const latency = t.faults.latency_ms[r.operation];
    if (latency) await sleep(latency);

    const rule = takeRule(t, r.operation);
    const body = parsed.ok ? parsed.value : undefined;
    if (rule?.action.type === "respond") {
      if (rule.action.apply) perform(t, r.operation, poolId, r.id, body);
      return answer(rule.action.status, rule.action.body, rule.action.headers);
    }
    if (rule?.action.type === "machine_status" && r.operation === "create") {
      const out = perform(t, r.operation, poolId, r.id, body);
      const m = out.status === 201 ? find(t, poolId, (body as BootstrapInstance).name) : undefined;
      if (!m) return answer(out.status, out.body);
      m.status = rule.action.status;
      return answer(201, providerInstance(m));
    }
    if (rule?.action.type === "flood") {
      record.status = rule.action.status;
      res.writeHead(rule.action.status, { "content-type": "application/json" });
      const chunk = Buffer.alloc(64 * 1024, "x");
      for (let left = rule.action.bytes; left > 0 && !res.destroyed; left -= chunk.length) {
        if (!res.write(left >= chunk.length ? chunk : chunk.subarray(0, left))) await new Promise((r) => res.once("drain", r));
      }
      res.end();
      return;
    }
    if (rule?.action.type === "hang") {
      if (rule.action.apply) perform(t, r.operation, poolId, r.id, body);
      record.status = null;
      return; // the socket stays open until the client aborts or the server stops
    }
    if (rule?.action.type === "async" && (r.operation === "create" || r.operation === "delete")) {
      if (r.operation === "delete" && !find(t, poolId, r.id!)) return answer(404, { error: "no such instance" });
      return answer(202, { operation_id: startAsync(t, r.operation, poolId, r.id, body, rule.action) });
    }
    const out = perform(t, r.operation, poolId, r.id, body);
    return answer(out.status, out.body);
  }

  /** One instance of a batch: what a single create would answer, through the `create` rules that fit an item. */
  function createItem(t: Tenant, poolId: string, b: BootstrapInstance): { status: number; body?: unknown } {
    const shape = shapedCreateProblem(t.flavors, b);
    if (shape) return { status: 400, body: { error: `cannot create ${b.name}: ${shape}` } };
    const rule = takeRule(t, "create");
    const action = rule?.action;
    if (action?.type === "respond") {
      if (action.apply) perform(t, "create", poolId, undefined, b);
      return { status: action.status, body: action.body };
    }
    if (action?.type === "async") return { status: 202, body: { operation_id: startAsync(t, "create", poolId, undefined, b, action) } };
    const out = perform(t, "create", poolId, undefined, b);
    const m = action?.type === "machine_status" && out.status === 201 ? find(t, poolId, b.name) : undefined;
    if (!m) return out;
    m.status = (action as Extract<FaultAction, { type: "machine_status" }>).status;
    return { status: 201, body: providerInstance(m) };
  }

  /** `POST /v1/instances:batch` (v1.1): refused whole with nothing made, or one answer per instance. */
  async function batchCreate(
    t: Tenant,
    poolId: string,
    body: unknown,
    record: RecordedRequest,
    answer: (status: number, body?: unknown) => void,
  ) {
    if (!t.batchCreateMax) return answer(404, { error: "no route POST /v1/instances:batch (this shim speaks protocol v1)" });
    if (body === undefined) return answer(400, { error: "body is not JSON" });
    const v = validateBatchCreate(body, poolId, t.batchCreateMax);
    if (!v.ok) return answer(v.tooLarge ? 413 : 400, { error: "invalid batch", details: v.problems });
    const latency = t.faults.latency_ms.create_batch ?? t.faults.latency_ms.create;
    if (latency) await sleep(latency);
    const whole = takeRule(t, "create_batch")?.action;
    if (whole?.type === "respond") return answer(whole.status, whole.body);
    if (whole?.type === "hang") return;
    const results = v.value.map((b) => ({ name: b.name, ...createItem(t, poolId, b) }));
    record.items = results.map((r) => ({ name: r.name, status: r.status }));
    return answer(200, { results });
  }

  async function control(req: IncomingMessage, res: ServerResponse, parts: string[], raw: Buffer) {
    const method = req.method ?? "GET";
    const parsed = parseJson(raw);
    const body = (parsed.ok ? parsed.value : undefined) as any;
    if (parts.length === 0 && method === "POST") {
      if (!body || typeof body.secret !== "string") return json(res, 400, { error: "secret is required" });
      // An explicit null is a tenant without a catalogue even where the server has a default (the simulator's).
      const flavors = readCatalogue("flavors" in body ? body.flavors : (opts.flavors ?? null));
      if (!flavors.ok) return json(res, 400, { error: "flavors is not a valid FlavorCatalogue", details: flavors.problems });
      const id = randomUUID().slice(0, 8);
      tenants.set(id, {
        id,
        secret: body.secret,
        callbackUrl: typeof body.callback_url === "string" ? body.callback_url : null,
        batchCreateMax: typeof body.batch_create_max === "number" ? body.batch_create_max : (opts.batchCreateMax ?? 0),
        flavors: flavors.value,
        machines: new Map(),
        requests: [],
        callbacks: [],
        faults: { latency_ms: {}, rules: [] },
      });
      return json(res, 201, { id, url: `${baseUrl}/t/${id}` });
    }
    const t = tenants.get(parts[0] ?? "");
    if (!t) return json(res, 404, { error: "no such tenant" });
    const [, what, key] = parts;
    if (what === "instances" && !key && method === "GET") return json(res, 200, [...t.machines.values()]);
    if (what === "instances" && !key && method === "POST") {
      if (!body || typeof body.pool_id !== "string" || typeof body.name !== "string") {
        return json(res, 400, { error: "pool_id and name are required" });
      }
      const { pool_id, name, ...over } = body;
      return json(res, 201, newMachine(t, pool_id, name, undefined, over));
    }
    if (what === "instances" && key) {
      const m = t.machines.get(key) ?? [...t.machines.values()].find((x) => x.name === key);
      if (!m) return json(res, 404, { error: "no such machine" });
      if (method === "PATCH") return json(res, 200, Object.assign(m, body ?? {}));
      if (method === "DELETE") {
        removeMachine(t, m);
        return json(res, 204);
      }
    }
    if (what === "requests" && method === "GET") return json(res, 200, t.requests);
    if (what === "callbacks" && !key && method === "GET") return json(res, 200, t.callbacks);
    if (what === "callbacks" && key === "take" && method === "POST") {
      const waiting = t.callbacks.filter((cb) => cb.state === "outbox");
      for (const cb of waiting) cb.state = "taken";
      return json(res, 200, waiting);
    }
    if (!what && method === "PATCH") {
      const flavors = typeof body === "object" && body !== null && "flavors" in body ? readCatalogue(body.flavors) : null;
      if (flavors && !flavors.ok) return json(res, 400, { error: "flavors is not a valid FlavorCatalogue", details: flavors.problems });
      if (flavors) t.flavors = flavors.value;
      if (typeof body?.secret === "string") t.secret = body.secret;
      if (typeof body?.callback_url === "string") t.callbackUrl = body.callback_url;
      if (typeof body?.batch_create_max === "number") t.batchCreateMax = body.batch_create_max;
      return json(res, 200, {
        id: t.id,
        url: `${baseUrl}/t/${t.id}`,
        callback_url: t.callbackUrl,
        batch_create_max: t.batchCreateMax,
        flavors: t.flavors,
      });
    }
    if (what === "faults" && !key && method === "PUT") {
      t.faults = { latency_ms: body?.latency_ms ?? {}, rules: body?.rules ?? [] };
      return json(res, 200, t.faults);
    }
    if (what === "faults" && !key && method === "PATCH") {
      t.faults.latency_ms = { ...t.faults.latency_ms, ...(body?.latency_ms ?? {}) };
      return json(res, 200, t.faults);
    }
    if (what === "faults" && key === "rules" && method === "POST") {
      t.faults.rules.push(body);
      return json(res, 200, t.faults);
    }
    if (what === "reset" && method === "POST") {
      for (const m of [...t.machines.values()]) removeMachine(t, m);
      t.requests = [];
      t.callbacks = [];
      t.faults = { latency_ms: {}, rules: [] };
      return json(res, 204);
    }
    return json(res, 404, { error: `no control route ${method} ${parts.join("/")}` });
  }

  const server: Server = createServer(async (req, res) => {
    try {
      const raw = await readBody(req);
      // The request target exactly as received: that is what the signature covers.
      const target = req.url ?? "/";
      const pathname = target.split("?")[0]!;
      const segments = pathname.split("/").filter(Boolean);
      if (segments[0] === "_control" && segments[1] === "tenants") return await control(req, res, segments.slice(2), raw);
      if (segments[0] === "_control" && opts.control) {
        const parsed = parseJson(raw);
        if (!parsed.ok) return json(res, 400, { error: "body is not JSON" });
        const out = opts.control(req.method ?? "GET", segments.slice(1), parsed.value, new URLSearchParams(target.split("?")[1] ?? ""));
        if (out) return json(res, out.status, out.body);
      }
      if (segments[0] === "t" && segments[1]) {
        const t = tenants.get(segments[1]);
        if (!t) return json(res, 404, { error: "no such tenant" });
        const rest = pathname.slice(`/t/${segments[1]}`.length) || "/";
        return await protocol(t, req, res, target, rest, raw);
      }
      json(res, 404, { error: "not found" });
    } catch (err) {
      if (!res.headersSent) json(res, 500, { error: err instanceof Error ? err.message : String(err) });
    }
  });
  server.on("connection", (s) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(opts.port ?? 0, "127.0.0.1", () => resolve());
  });
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    url: baseUrl,
    async stop() {
      for (const t of timers) clearTimeout(t);
      timers.clear();
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
