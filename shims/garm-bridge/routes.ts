import { Hono, type MiddlewareHandler } from "hono";
import { type BatchCreateItemResult, SHIM_INTERFACE_VERSION, SHIM_INTERFACE_VERSION_BATCH } from "../../src/providers/shim-protocol.ts";
import { type BridgeContext, type BridgeEnv, errorAnswer, failureAnswer, HttpError, requestPath } from "./answers.ts";
import { GarmBootstrapBody } from "./bootstrap-body.ts";
import { type BridgeConfig, batchCreateMax } from "./config.ts";
import type { InstanceOperations } from "./instance-operations.ts";
import { type Pool, type ProviderCaller, poolCall } from "./provider-calls.ts";

/**
 * Provider shim protocol v1 (and v1.1's batch create), one handler per operation. Each names its operation (and
 * instance) for the request log, checks the context headers, and turns what the provider
 * said into the protocol's answer. Requests reach them signed (see signature.ts).
 */

type Handler = (c: BridgeContext) => Response | Promise<Response>;

/** One path's handlers by method; any other method is 405, as the protocol has no others. */
const byMethod =
  (handlers: Record<string, Handler>): Handler =>
  (c) => {
    // c.req.method is the method as sent: Hono routes HEAD as GET, the protocol refuses it.
    const handler = Object.hasOwn(handlers, c.req.method) ? handlers[c.req.method] : undefined;
    if (!handler) throw new HttpError(405, `${c.req.method} is not allowed on ${requestPath(c)}`);
    return handler(c);
  };

/** `{id}` must be valid percent-encoding (Hono would pass a broken one on undecoded). */
const validInstanceId: MiddlewareHandler<BridgeEnv> = async (c, next) => {
  try {
    // The rest of the routed path is literal ASCII: only the id can fail to decode.
    decodeURIComponent(c.req.path);
  } catch {
    throw new HttpError(400, "instance id is not valid percent-encoding");
  }
  await next();
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

export function protocolRoutes(cfg: BridgeConfig, provider: ProviderCaller, ops: InstanceOperations): Hono<BridgeEnv> {
  /** Names the operation for the request log; the instance too when the path has one. */
  const operation = (c: BridgeContext, name: string): string => {
    c.set("operation", name);
    const id = c.req.param("id");
    if (id !== undefined) c.set("instance", id);
    return id ?? "";
  };

  function controllerOf(c: BridgeContext): string {
    const controllerId = c.req.header("X-Edgerunner-Controller-Id");
    if (!controllerId) throw new HttpError(400, "missing X-Edgerunner-Controller-Id");
    if (cfg.controller_id && controllerId !== cfg.controller_id) {
      throw new HttpError(403, "this bridge serves another controller", { expected_controller: cfg.controller_id });
    }
    return controllerId;
  }

  function poolOf(c: BridgeContext): Pool {
    const controllerId = controllerOf(c);
    const poolId = c.req.header("X-Edgerunner-Pool-Id");
    if (!poolId) throw new HttpError(400, "missing X-Edgerunner-Pool-Id");
    const specs = c.req.header("X-Edgerunner-Pool-Extra-Specs");
    if (specs !== undefined) checkExtraSpecs(specs);
    return { controllerId, poolId, extraSpecsBase64: specs ?? Buffer.from("{}").toString("base64") };
  }

  const noInstance = (c: BridgeContext, id: string) => errorAnswer(c, 404, `no instance ${id}`);

  const maxBatch = batchCreateMax(cfg);

  // No provider call: GARM never runs GetVersion, and older providers fail it.
  const capabilities: Handler = (c) => {
    operation(c, "capabilities");
    controllerOf(c);
    return c.json({
      interface_version: maxBatch ? SHIM_INTERFACE_VERSION_BATCH : SHIM_INTERFACE_VERSION,
      async: cfg.async,
      idempotent_create: true,
      garm_interface_version: cfg.interface_version,
      ...(maxBatch ? { batch_create: { max: maxBatch } } : {}),
    });
  };

  /** A create's body, checked as the single create checks it (`at`: where it is, for the error). */
  function bootstrapOf(pool: Pool, json: unknown, at: string) {
    const parsed = GarmBootstrapBody.safeParse(json);
    if (!parsed.success) {
      throw new HttpError(400, `${at} is not a BootstrapInstance`, {
        issues: parsed.error.issues.map((i) => `${i.path.join(".") || "(root)"}: ${i.message}`),
      });
    }
    if (parsed.data.pool_id != null && parsed.data.pool_id !== pool.poolId)
      throw new HttpError(400, `pool_id of ${at} differs from X-Edgerunner-Pool-Id`, { pool_id: parsed.data.pool_id });
    return parsed.data;
  }

  const create: Handler = async (c) => {
    operation(c, "create");
    const pool = poolOf(c);
    const raw = c.get("body");
    let json: unknown;
    try {
      json = JSON.parse(raw.toString("utf8"));
    } catch {
      throw new HttpError(400, "body is not JSON");
    }
    const b = bootstrapOf(pool, json, "body");
    const op = ops.startCreate(pool, b.name, raw, b["instance-token"] ?? "");
    if (cfg.async) return c.json({ operation_id: op.operationId }, 202);
    const r = await op.promise;
    if (!r.ok) return failureAnswer(c, r.failure);
    // A retry that joined a running create gets the machine as "already existed".
    return c.json(r.instance, op.joined ? 200 : r.status);
  };

  /**
   * v1.1: each instance is created exactly as a single create would be (the provider's
   * CreateInstance, within the bridge's concurrency limit; idempotent on the name), and
   * answered as that create would have been: 202 each at once when async. A batch with any bad
   * item is refused whole before anything runs.
   */
  const createBatch: Handler = async (c) => {
    operation(c, "create_batch");
    if (!maxBatch) throw new HttpError(404, `no route POST ${requestPath(c)} (batch_create_max is 0)`);
    const pool = poolOf(c);
    let json: unknown;
    try {
      json = JSON.parse(c.get("body").toString("utf8"));
    } catch {
      throw new HttpError(400, "body is not JSON");
    }
    const items = (json as { instances?: unknown } | null)?.instances;
    if (!Array.isArray(items) || items.length === 0) throw new HttpError(400, "body is not {instances: [BootstrapInstance, …]}");
    if (items.length > maxBatch) throw new HttpError(413, `${items.length} instances: the largest batch is ${maxBatch}`);
    const bs = items.map((item, i) => bootstrapOf(pool, item, `instances.${i}`));
    const names = new Set(bs.map((b) => b.name));
    if (names.size !== bs.length) throw new HttpError(400, "an instance name appears twice in the batch");
    // Each provider call gets its own instance's JSON on stdin, as a single create does.
    const started = bs.map((b, i) => ({
      b,
      op: ops.startCreate(pool, b.name, Buffer.from(JSON.stringify(items[i])), b["instance-token"] ?? ""),
    }));
    const results: BatchCreateItemResult[] = await Promise.all(
      started.map(async ({ b, op }): Promise<BatchCreateItemResult> => {
        if (cfg.async) return { name: b.name, status: 202, body: { operation_id: op.operationId } };
        const r = await op.promise;
        if (!r.ok) return { name: b.name, status: r.failure.status, body: { error: r.failure.message } };
        return { name: b.name, status: op.joined ? 200 : r.status, body: r.instance };
      }),
    );
    return c.json({ results });
  };

  const list: Handler = async (c) => {
    operation(c, "list");
    const listed = await ops.list(poolOf(c));
    return listed.ok ? c.json(listed.instances) : failureAnswer(c, listed.failure);
  };

  const removeAll: Handler = async (c) => {
    operation(c, "remove_all");
    const done = await ops.removeAll(poolOf(c));
    return done.ok ? c.body(null, 204) : failureAnswer(c, done.failure);
  };

  const get: Handler = async (c) => {
    const id = operation(c, "get");
    const pool = poolOf(c);
    const got = await ops.lookup(pool, id, []);
    if (!got.ok) return failureAnswer(c, got.failure);
    if (got.instance) return c.json(got.instance);
    if (ops.creating(pool, id)) return failureAnswer(c, { status: 503, retryable: true, message: `the create of ${id} is still running` });
    return noInstance(c, id);
  };

  const remove: Handler = async (c) => {
    const id = operation(c, "delete");
    const pool = poolOf(c);
    if (cfg.async) {
      const inFlight = ops.deleteUnderWay(pool, id);
      if (inFlight) return c.json({ operation_id: inFlight.operationId }, 202);
      const name = await ops.owner(pool, id);
      if (!name.ok) return failureAnswer(c, name.failure);
      if (name.name === null) return noInstance(c, id);
      return c.json({ operation_id: ops.startDelete(pool, id, name.name).operationId }, 202);
    }
    const r = await ops.startDelete(pool, id, id).promise;
    if (!r.ok) return failureAnswer(c, r.failure);
    return r.found ? c.body(null, 204) : noInstance(c, id);
  };

  const power =
    (to: "start" | "stop"): Handler =>
    async (c) => {
      const id = operation(c, to);
      const pool = poolOf(c);
      // Only a machine of the caller's pool (see instance-operations.ts).
      const member = await ops.owner(pool, id);
      if (!member.ok) return failureAnswer(c, member.failure);
      if (member.name === null) return noInstance(c, id);
      const out = await provider.run(poolCall(to === "start" ? "StartInstance" : "StopInstance", pool, id), undefined, []);
      if (out.type === "ok") return c.body(null, 204);
      if (out.type === "not_found") return noInstance(c, id);
      if (out.type === "duplicate") return failureAnswer(c, { status: 500, retryable: true, message: out.message });
      return failureAnswer(c, out.failure);
    };

  return (
    new Hono<BridgeEnv>()
      .all("/v1/capabilities", byMethod({ GET: capabilities }))
      .all("/v1/instances", byMethod({ POST: create, GET: list, DELETE: removeAll }))
      // `/v1/instances:batch`: a pattern, since a bare `:` would start a path parameter.
      .all("/v1/:batch{instances:batch}", byMethod({ POST: createBatch }))
      .all("/v1/instances/:id", validInstanceId, byMethod({ GET: get, DELETE: remove }))
      .all("/v1/instances/:id/start", validInstanceId, byMethod({ POST: power("start") }))
      .all("/v1/instances/:id/stop", validInstanceId, byMethod({ POST: power("stop") }))
  );
}
