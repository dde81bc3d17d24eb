import { Hono, type MiddlewareHandler } from "hono";
import { SHIM_INTERFACE_VERSION } from "../../src/providers/shim-protocol.ts";
import { type BridgeContext, type BridgeEnv, errorAnswer, failureAnswer, HttpError, requestPath } from "./answers.ts";
import { GarmBootstrapBody } from "./bootstrap-body.ts";
import type { BridgeConfig } from "./config.ts";
import type { InstanceOperations } from "./instance-operations.ts";
import { type Pool, type ProviderCaller, poolCall } from "./provider-calls.ts";

/**
 * Provider shim protocol v1, one handler per operation. Each names its operation (and
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

  // No provider call: GARM never runs GetVersion, and older providers fail it.
  const capabilities: Handler = (c) => {
    operation(c, "capabilities");
    controllerOf(c);
    return c.json({
      interface_version: SHIM_INTERFACE_VERSION,
      async: cfg.async,
      idempotent_create: true,
      garm_interface_version: cfg.interface_version,
    });
  };

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
    const parsed = GarmBootstrapBody.safeParse(json);
    if (!parsed.success) {
      throw new HttpError(400, "body is not a BootstrapInstance", {
        issues: parsed.error.issues.map((i) => `${i.path.join(".") || "(root)"}: ${i.message}`),
      });
    }
    const b = parsed.data;
    if (b.pool_id != null && b.pool_id !== pool.poolId)
      throw new HttpError(400, "pool_id differs from X-Edgerunner-Pool-Id", { pool_id: b.pool_id });
    const op = ops.startCreate(pool, b.name, raw, b["instance-token"] ?? "");
    if (cfg.async) return c.json({ operation_id: op.operationId }, 202);
    const r = await op.promise;
    if (!r.ok) return failureAnswer(c, r.failure);
    // A retry that joined a running create gets the machine as "already existed".
    return c.json(r.instance, op.joined ? 200 : r.status);
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

  return new Hono<BridgeEnv>()
    .all("/v1/capabilities", byMethod({ GET: capabilities }))
    .all("/v1/instances", byMethod({ POST: create, GET: list, DELETE: removeAll }))
    .all("/v1/instances/:id", validInstanceId, byMethod({ GET: get, DELETE: remove }))
    .all("/v1/instances/:id/start", validInstanceId, byMethod({ POST: power("start") }))
    .all("/v1/instances/:id/stop", validInstanceId, byMethod({ POST: power("stop") }));
}
