import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { BootstrapInstance, SHIM_INTERFACE_VERSION, type ShimCallback, type ValidProviderInstance } from "../../src/providers/shim-protocol.ts";
import { matchShimRoute, type ShimRoute } from "../../src/providers/shim-routes.ts";
import { verifySignature } from "../../src/providers/shim-signing.ts";
import { type CallbackSender, createCallbackSender } from "./callbacks.ts";
import type { BridgeConfig } from "./config.ts";
import { createLimiter, QueueFull } from "./limiter.ts";
import { createLogger, type Logger, redact } from "./log.ts";
import { type ExitOutcome, type Failure, exitOutcome, parseInstance, parseInstanceList } from "./outcome.ts";
import { type GarmCommand, type ProviderCall, providerEnv } from "./provider-env.ts";
import { runProvider } from "./run-provider.ts";

/**
 * The GARM bridge: provider shim protocol v1 over HTTP on one side, a GARM external
 * provider executable on the other, run once per call exactly as GARM runs it.
 *
 * Idempotent create: a create for a name whose create is still running joins it (same
 * answer, or the same operation id when async); otherwise the provider is asked first
 * (GetInstance with GARM_INSTANCE_ID = the name, GARM's rule for machines without a known
 * provider id) and an existing machine is answered 200 without running CreateInstance. A
 * CreateInstance that exits 31 (duplicate) is looked up the same way, so a machine created
 * by a run the bridge has forgotten (a restart) is still found.
 */

export interface GarmBridge {
  url: string;
  port: number;
  /** Stops listening, waits for provider calls under way, then stops retrying callbacks. */
  stop(): Promise<void>;
}

export interface BridgeOptions {
  config: BridgeConfig;
  log?: Logger;
  /** The bridge's own environment, source of `pass_env` (default: process.env). */
  environ?: NodeJS.ProcessEnv;
}

const MAX_REQUEST_BYTES = 1024 * 1024;

type Route = ShimRoute;

type CreateResult = { ok: true; status: 200 | 201; instance: ValidProviderInstance } | { ok: false; failure: Failure };
type DeleteResult = { ok: true; found: boolean } | { ok: false; failure: Failure };

interface Pool {
  controllerId: string;
  poolId: string;
  extraSpecsBase64: string;
}

class HttpError extends Error {
  status: number;
  details?: unknown;
  constructor(status: number, message: string, details?: unknown) {
    super(message);
    this.status = status;
    this.details = details;
  }
}


function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let over = false;
    req.on("data", (c: Buffer) => {
      size += c.length;
      if (size > MAX_REQUEST_BYTES) over = true;
      else chunks.push(c);
    });
    req.on("end", () => (over ? reject(new HttpError(413, `request body over ${MAX_REQUEST_BYTES} bytes`)) : resolve(Buffer.concat(chunks))));
    req.on("error", reject);
  });
}

const header = (req: IncomingMessage, name: string) => {
  const v = req.headers[name.toLowerCase()];
  return Array.isArray(v) ? v[0] : v;
};

/** X-Edgerunner-Pool-Extra-Specs must be standard base64 of JSON; handed to the provider as received. */
function checkExtraSpecs(value: string): void {
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(value) || value.length % 4 !== 0) {
    throw new HttpError(400, "X-Edgerunner-Pool-Extra-Specs is not base64");
  }
  try {
    JSON.parse(Buffer.from(value, "base64").toString("utf8"));
  } catch {
    throw new HttpError(400, "X-Edgerunner-Pool-Extra-Specs is not base64 of JSON");
  }
}

export async function startGarmBridge(opts: BridgeOptions): Promise<GarmBridge> {
  const cfg = opts.config;
  const log = opts.log ?? createLogger();
  const environ = opts.environ ?? process.env;
  const timeoutMs = Math.round(cfg.timeout_seconds * 1000);
  const limiter = createLimiter(cfg.concurrency, cfg.max_queue);
  const secrets = [cfg.secret, ...cfg.previous_secrets];
  const callbacks: CallbackSender | null = cfg.callback_url
    ? createCallbackSender(
        { url: cfg.callback_url, secret: () => cfg.secret, attempts: cfg.callback_attempts, initialDelayMs: cfg.callback_initial_delay_ms },
        log,
      )
    : null;

  /** Creates and deletes under way, by pool and name/id: what makes retries join instead of repeat. */
  const creates = new Map<string, { operationId: string; promise: Promise<CreateResult> }>();
  const deletes = new Map<string, { operationId: string; promise: Promise<DeleteResult> }>();
  const work = new Set<Promise<unknown>>();
  const track = <T>(p: Promise<T>): Promise<T> => {
    work.add(p);
    void p.finally(() => work.delete(p)).catch(() => {});
    return p;
  };
  let providerVersion: string | undefined;
  let versionAsked = false;
  /** provider_id → instance name, from every machine the provider showed us: async delete callbacks must name the instance. */
  const names = new Map<string, string>();
  /**
   * Provider ids deleted lately. A GetInstance that read the machine just before its delete can
   * finish after it: it must not put the machine back, or a repeated delete would answer 202
   * for a machine that is gone instead of 404.
   */
  const deleted = new Set<string>();
  const remember = (pool: Pool, instances: ValidProviderInstance[]) => {
    for (const i of instances) {
      const k = key(pool, i.provider_id);
      if (deleted.has(k)) continue;
      names.delete(k);
      names.set(k, i.name);
    }
    // Oldest first in a Map: drop from the front.
    for (const k of names.keys()) {
      if (names.size <= 50_000) break;
      names.delete(k);
    }
  };

  /** Runs one provider command through the concurrency limit; never throws. */
  async function run(call: ProviderCall, stdin: Uint8Array | undefined, hide: string[]): Promise<ExitOutcome> {
    const env = providerEnv(
      call,
      { interfaceVersion: cfg.interface_version, providerConfigFile: cfg.provider_config_file, env: cfg.env, passEnv: cfg.pass_env },
      environ,
    );
    let outcome: ExitOutcome;
    try {
      const result = await limiter.run(() =>
        runProvider({ executable: cfg.provider_executable, env, stdin, timeoutMs, maxOutputBytes: cfg.max_output_bytes }),
      );
      outcome = exitOutcome(call.command, result, timeoutMs);
      log("provider_exec", {
        command: call.command,
        scale_set: call.poolId,
        instance: call.instanceId,
        result: result.kind,
        exit_code: result.kind === "exited" ? result.code : null,
        signal: result.kind === "exited" ? result.signal : null,
        duration_ms: result.durationMs,
        stdout_bytes: "stdout" in result ? result.stdout.length : 0,
        stderr_bytes: "stderr" in result ? result.stderr.length : 0,
      });
    } catch (err) {
      if (!(err instanceof QueueFull)) throw err;
      outcome = { type: "failed", failure: { status: 503, retryable: true, message: err.message } };
      log("provider_queue_full", { command: call.command, scale_set: call.poolId, running: err.running, queued: err.queued });
    }
    const all = [...secrets, ...hide];
    if (outcome.type === "failed") outcome.failure.message = redact(outcome.failure.message, all);
    else if (outcome.type !== "ok") outcome.message = redact(outcome.message, all);
    return outcome;
  }

  const poolCall = (command: GarmCommand, pool: Pool, instanceId?: string): ProviderCall => ({
    command,
    controllerId: pool.controllerId,
    poolId: pool.poolId,
    extraSpecsBase64: pool.extraSpecsBase64,
    ...(instanceId === undefined ? {} : { instanceId }),
  });

  /** GetInstance by name or id: the machine, null when the provider says not found, or a failure. */
  async function lookup(pool: Pool, id: string, hide: string[], expectedName?: string): Promise<{ ok: true; instance: ValidProviderInstance | null } | { ok: false; failure: Failure }> {
    const got = await run(poolCall("GetInstance", pool, id), undefined, hide);
    if (got.type === "not_found") return { ok: true, instance: null };
    if (got.type === "failed") return { ok: false, failure: got.failure };
    if (got.type === "duplicate") return { ok: false, failure: { status: 500, retryable: true, message: got.message } };
    const parsed = parseInstance("GetInstance", got.stdout, expectedName);
    if (!parsed.ok) return { ok: false, failure: { ...parsed.failure, message: redact(parsed.failure.message, [...secrets, ...hide]) } };
    remember(pool, [parsed.value]);
    return { ok: true, instance: parsed.value };
  }

  async function create(pool: Pool, name: string, raw: Buffer, token: string): Promise<CreateResult> {
    const hide = [token];
    if (cfg.create_lookup === "get") {
      const existing = await lookup(pool, name, hide, name);
      if (!existing.ok) return { ok: false, failure: { ...existing.failure, message: `checking whether ${name} exists: ${existing.failure.message}` } };
      if (existing.instance) {
        log("create_found_existing", { scale_set: pool.poolId, instance: name, provider_id: existing.instance.provider_id });
        return { ok: true, status: 200, instance: existing.instance };
      }
    }
    const made = await run(poolCall("CreateInstance", pool), raw, hide);
    if (made.type === "ok") {
      const parsed = parseInstance("CreateInstance", made.stdout, name);
      if (!parsed.ok) return { ok: false, failure: { ...parsed.failure, message: redact(parsed.failure.message, [...secrets, token]) } };
      deleted.delete(key(pool, parsed.value.provider_id));
      remember(pool, [parsed.value]);
      return { ok: true, status: 201, instance: parsed.value };
    }
    if (made.type === "duplicate") {
      // Ours from a run we no longer remember, or someone else's: only a lookup can tell.
      const existing = await lookup(pool, name, hide, name);
      if (existing.ok && existing.instance) return { ok: true, status: 200, instance: existing.instance };
      return { ok: false, failure: { status: 409, retryable: false, message: made.message } };
    }
    if (made.type === "not_found") return { ok: false, failure: { status: 500, retryable: true, message: made.message } };
    return { ok: false, failure: made.failure };
  }

  async function remove(pool: Pool, id: string): Promise<DeleteResult> {
    // A delete racing the create of the same name would find nothing and leave the machine behind.
    await creates.get(key(pool, id))?.promise;
    const done = await run(poolCall("DeleteInstance", pool, id), undefined, []);
    if (done.type === "ok" || done.type === "not_found") {
      // {id} is the provider id or the name: forget the machine under its provider id either way.
      const prefix = key(pool, "");
      const gone = [key(pool, id), ...[...names].filter(([k, name]) => name === id && k.startsWith(prefix)).map(([k]) => k)];
      for (const k of gone) {
        names.delete(k);
        deleted.add(k);
      }
      for (const old of deleted) {
        if (deleted.size <= 10_000) break;
        deleted.delete(old);
      }
      return { ok: true, found: done.type === "ok" };
    }
    if (done.type === "duplicate") return { ok: false, failure: { status: 500, retryable: true, message: done.message } };
    return { ok: false, failure: done.failure };
  }

  const key = (pool: Pool, id: string) => `${pool.poolId}\u0000${id}`;

  function sendCallback(cb: ShimCallback) {
    if (callbacks) void callbacks.send(cb);
  }

  function startCreate(pool: Pool, name: string, raw: Buffer, token: string) {
    const k = key(pool, name);
    const existing = creates.get(k);
    if (existing) {
      log("create_joined", { scale_set: pool.poolId, instance: name, operation_id: existing.operationId });
      return { ...existing, joined: true };
    }
    const operationId = `op-${randomUUID()}`;
    const promise = track(create(pool, name, raw, token)).finally(() => creates.delete(k));
    const entry = { operationId, promise };
    creates.set(k, entry);
    if (cfg.async) {
      void track(promise.then((r) =>
        sendCallback({
          operation_id: operationId,
          instance_name: name,
          result: r.ok ? r.instance : null,
          error: r.ok ? null : { message: r.failure.message.slice(0, 16 * 1024), retryable: r.failure.retryable },
        }),
      ));
    }
    return { ...entry, joined: false };
  }

  /**
   * The instance name an async delete's callback must carry, when `{id}` may be a provider id:
   * from a machine seen before, a create under way, or the provider itself (GetInstance). Null
   * when the provider does not know the machine: the delete is then already done (404).
   */
  async function nameFor(pool: Pool, id: string): Promise<{ ok: true; name: string | null } | { ok: false; failure: Failure }> {
    const known = names.get(key(pool, id));
    if (known) return { ok: true, name: known };
    if (creates.has(key(pool, id))) return { ok: true, name: id };
    const got = await lookup(pool, id, []);
    if (!got.ok) return got;
    return { ok: true, name: got.instance ? got.instance.name : null };
  }

  function startDelete(pool: Pool, id: string, name: string) {
    const k = key(pool, id);
    const existing = deletes.get(k);
    if (existing) return existing;
    const operationId = `op-${randomUUID()}`;
    const promise = track(remove(pool, id)).finally(() => deletes.delete(k));
    const entry = { operationId, promise };
    deletes.set(k, entry);
    if (cfg.async) {
      void track(promise.then((r) =>
        sendCallback({
          operation_id: operationId,
          instance_name: name,
          result: null,
          error: r.ok ? null : { message: r.failure.message.slice(0, 16 * 1024), retryable: r.failure.retryable },
        }),
      ));
    }
    return entry;
  }

  type Answer = { status: number; body?: unknown; headers?: Record<string, string> };
  const failureAnswer = (f: Failure): Answer => ({
    status: f.status,
    body: { error: f.message },
    ...(f.status === 503 ? { headers: { "retry-after": "5" } } : {}),
  });

  async function handle(route: Route, req: IncomingMessage, raw: Buffer): Promise<Answer> {
    const controllerId = header(req, "X-Edgerunner-Controller-Id");
    if (!controllerId) throw new HttpError(400, "missing X-Edgerunner-Controller-Id");
    if (cfg.controller_id && controllerId !== cfg.controller_id) {
      throw new HttpError(403, "this bridge serves another controller", { expected_controller: cfg.controller_id });
    }

    if (route.op === "capabilities") {
      // Asked once per bridge: older providers do not implement GetVersion, and it never changes under us.
      if (!versionAsked) {
        versionAsked = true;
        const v = await run({ command: "GetVersion", controllerId }, undefined, []);
        if (v.type === "ok" && v.stdout.trim()) providerVersion = v.stdout.trim().slice(0, 200);
      }
      return {
        status: 200,
        body: {
          interface_version: SHIM_INTERFACE_VERSION,
          async: cfg.async,
          idempotent_create: true,
          garm_interface_version: cfg.interface_version,
          ...(providerVersion ? { provider_version: providerVersion } : {}),
        },
      };
    }

    const poolId = header(req, "X-Edgerunner-Pool-Id");
    if (!poolId) throw new HttpError(400, "missing X-Edgerunner-Pool-Id");
    const specs = header(req, "X-Edgerunner-Pool-Extra-Specs");
    if (specs !== undefined) checkExtraSpecs(specs);
    const pool: Pool = { controllerId, poolId, extraSpecsBase64: specs ?? Buffer.from("{}").toString("base64") };

    switch (route.op) {
      case "create": {
        let json: unknown;
        try {
          json = JSON.parse(raw.toString("utf8"));
        } catch {
          throw new HttpError(400, "body is not JSON");
        }
        const parsed = BootstrapInstance.safeParse(json);
        if (!parsed.success) {
          throw new HttpError(400, "body is not a BootstrapInstance", {
            issues: parsed.error.issues.map((i) => `${i.path.join(".") || "(root)"}: ${i.message}`),
          });
        }
        const b = parsed.data;
        if (b.pool_id !== poolId) throw new HttpError(400, "pool_id differs from X-Edgerunner-Pool-Id", { pool_id: b.pool_id });
        const op = startCreate(pool, b.name, raw, b["instance-token"]);
        if (cfg.async) return { status: 202, body: { operation_id: op.operationId } };
        const r = await op.promise;
        if (!r.ok) return failureAnswer(r.failure);
        // A retry that joined a running create gets the machine as "already existed".
        return { status: op.joined ? 200 : r.status, body: r.instance };
      }
      case "delete": {
        if (cfg.async) {
          const inFlight = deletes.get(key(pool, route.id));
          if (inFlight) return { status: 202, body: { operation_id: inFlight.operationId } };
          const name = await nameFor(pool, route.id);
          if (!name.ok) return failureAnswer(name.failure);
          if (name.name === null) return { status: 404, body: { error: `no instance ${route.id}` } };
          return { status: 202, body: { operation_id: startDelete(pool, route.id, name.name).operationId } };
        }
        const op = startDelete(pool, route.id, route.id);
        const r = await op.promise;
        if (!r.ok) return failureAnswer(r.failure);
        return r.found ? { status: 204 } : { status: 404, body: { error: `no instance ${route.id}` } };
      }
      case "get": {
        const got = await lookup(pool, route.id, []);
        if (!got.ok) return failureAnswer(got.failure);
        if (got.instance) return { status: 200, body: got.instance };
        if (creates.has(key(pool, route.id))) {
          return failureAnswer({ status: 503, retryable: true, message: `the create of ${route.id} is still running` });
        }
        return { status: 404, body: { error: `no instance ${route.id}` } };
      }
      case "list": {
        const out = await run(poolCall("ListInstances", pool), undefined, []);
        if (out.type === "failed") return failureAnswer(out.failure);
        if (out.type !== "ok") return failureAnswer({ status: 500, retryable: true, message: out.message });
        const list = parseInstanceList(out.stdout);
        if (!list.ok) return failureAnswer(list.failure);
        remember(pool, list.value);
        return { status: 200, body: list.value };
      }
      case "start":
      case "stop": {
        const out = await run(poolCall(route.op === "start" ? "StartInstance" : "StopInstance", pool, route.id), undefined, []);
        if (out.type === "ok") return { status: 204 };
        if (out.type === "not_found") return { status: 404, body: { error: `no instance ${route.id}` } };
        if (out.type === "duplicate") return failureAnswer({ status: 500, retryable: true, message: out.message });
        return failureAnswer(out.failure);
      }
      case "remove_all": {
        const out = await run(poolCall("RemoveAllInstances", pool), undefined, []);
        // Not found: there was nothing left to remove, which is what was asked.
        if (out.type === "ok" || out.type === "not_found") return { status: 204 };
        if (out.type === "duplicate") return failureAnswer({ status: 500, retryable: true, message: out.message });
        return failureAnswer(out.failure);
      }
    }
  }

  const send = (res: ServerResponse, a: Answer) => {
    if (a.body === undefined) {
      res.writeHead(a.status, a.headers ?? {}).end();
      return;
    }
    res.writeHead(a.status, { "content-type": "application/json", ...(a.headers ?? {}) }).end(JSON.stringify(a.body));
  };

  /** Requests being answered: stop() lets them finish before closing connections. */
  const answering = new Set<Promise<void>>();
  const server = createServer(async (req, res) => {
    const done = new Promise<void>((resolve) => res.once("close", () => resolve()));
    answering.add(done);
    void done.then(() => answering.delete(done));
    const started = performance.now();
    const method = req.method ?? "GET";
    const target = req.url ?? "/";
    const path = target.split("?")[0]!;
    let op = "unknown";
    let instance: string | undefined;
    let answer: Answer;
    try {
      if (method === "GET" && (path === "/healthz" || path === `${cfg.base_path}/healthz`)) {
        send(res, { status: 200, body: { ok: true, ...limiter.stats() } });
        return;
      }
      // The signature covers the path the coordinator sent; a proxy that stripped the base path gets it put back.
      let rest: string;
      let signedTarget = target;
      if (cfg.base_path && path.startsWith(`${cfg.base_path}/`)) rest = path.slice(cfg.base_path.length);
      else if (cfg.base_path && path.startsWith("/v1/")) {
        rest = path;
        signedTarget = cfg.base_path + target;
      } else rest = path;
      const raw = await readBody(req);
      const received = { timestamp: header(req, "X-Edgerunner-Timestamp"), signature: header(req, "X-Edgerunner-Signature") };
      let check = await verifySignature(secrets[0]!, { method, pathWithQuery: signedTarget, body: raw }, received);
      for (const previous of secrets.slice(1)) {
        if (check.ok || check.reason !== "bad_signature") break;
        check = await verifySignature(previous, { method, pathWithQuery: signedTarget, body: raw }, received);
      }
      if (!check.ok) throw new HttpError(401, "unauthorized", { reason: check.reason });
      const route = matchShimRoute(method, rest);
      if (route === null) throw new HttpError(404, `no route ${method} ${path}`);
      if (route === "bad_id") throw new HttpError(400, "instance id is not valid percent-encoding");
      if (route === "method_not_allowed") throw new HttpError(405, `${method} is not allowed on ${path}`);
      op = route.op;
      if ("id" in route) instance = route.id;
      answer = await handle(route, req, raw);
    } catch (err) {
      answer =
        err instanceof HttpError
          ? { status: err.status, body: { error: err.message, ...(err.details === undefined ? {} : { details: err.details }) } }
          : { status: 500, body: { error: `bridge error: ${(err as Error).message}` } };
    }
    send(res, answer);
    const error = answer.status >= 400 && answer.body && typeof answer.body === "object" ? (answer.body as { error?: string }).error : undefined;
    log("bridge_request", {
      method,
      operation: op,
      scale_set: header(req, "X-Edgerunner-Pool-Id"),
      instance,
      status: answer.status,
      duration_ms: Math.round(performance.now() - started),
      ...(error ? { error: redact(error, secrets).slice(0, 1024) } : {}),
    });
  });
  server.keepAliveTimeout = 5_000;

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(cfg.port, cfg.host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const host = cfg.host.includes(":") ? `[${cfg.host}]` : cfg.host;
  log("bridge_started", {
    url: `http://${host}:${port}${cfg.base_path}`,
    provider_executable: cfg.provider_executable,
    interface_version: cfg.interface_version,
    async: cfg.async,
    concurrency: cfg.concurrency,
    max_queue: cfg.max_queue,
    timeout_seconds: cfg.timeout_seconds,
  });

  return {
    url: `http://${host}:${port}${cfg.base_path}`,
    port,
    async stop() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      // Killing a provider mid-create would leave a half-made machine: let calls under way finish.
      while (work.size || answering.size) await Promise.allSettled([...work, ...answering]);
      // Undelivered callbacks are not lost: the coordinator polls GET for operations it hears nothing about.
      callbacks?.close();
      await callbacks?.idle();
      server.closeAllConnections();
      await closed;
      log("bridge_stopped", {});
    },
  };
}
