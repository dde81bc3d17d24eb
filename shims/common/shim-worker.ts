import { logEvent } from "../../src/observability/log.ts";
import { ShimHeaders } from "../../src/providers/shim-protocol.ts";
import { matchShimRoute } from "../../src/providers/shim-routes.ts";
import { requestTarget, verifySignature } from "../../src/providers/shim-signing.ts";
import { decodeSpecsHeader, MAX_BODY_BYTES, readBody } from "./shim-request.ts";

/**
 * What every cloud shim Worker does before its cloud is asked anything (shared by the EC2, GCE
 * and Hetzner shims): `/healthz`, the settings, the request's signature (HMAC, 300 s window,
 * the current and previous secrets), the route, capabilities, the pool headers; and after, one
 * log line per request (never the body: a create carries the runner's instance token) and a 500
 * that says which shim failed. A shim gives its settings reader, its capabilities, any rule of
 * its own for the ids, and the operations on its cloud.
 */

/** A protocol answer, before it is a Response. */
export interface ShimAnswer {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

export const answer = (status: number, body?: unknown, headers?: Record<string, string>): ShimAnswer => ({ status, body, headers });

/** The settings every shim has, beside its cloud's. */
export interface ShimBaseConfig {
  secrets: string[];
  controllerId?: string | null;
}

/** A verified request on the pool's machines, for the cloud. */
export interface PoolRequest {
  route: { op: "create" | "list" | "remove_all" } | { op: "get" | "delete" | "start" | "stop"; id: string };
  body: string;
  controllerId: string;
  poolId: string;
  specs: unknown;
  /** Fields for the request's log line (calls made, the error class…). */
  log: Record<string, unknown>;
}

/** What every cloud shim does on its pool's machines, each with the request's own context `O`. */
export interface PoolOperations<O> {
  create(o: O, body: string): Promise<ShimAnswer>;
  list(o: O): Promise<ShimAnswer>;
  removeAll(o: O): Promise<ShimAnswer>;
  get(o: O, id: string): Promise<ShimAnswer>;
  change(o: O, id: string, op: "delete" | "start" | "stop"): Promise<ShimAnswer>;
}

/** Runs the operation a pool request's route names. */
export function runPoolOperation<O>(route: PoolRequest["route"], body: string, o: O, ops: PoolOperations<O>): Promise<ShimAnswer> {
  switch (route.op) {
    case "create":
      return ops.create(o, body);
    case "list":
      return ops.list(o);
    case "remove_all":
      return ops.removeAll(o);
    case "get":
      return ops.get(o, route.id);
    default:
      return ops.change(o, route.id, route.op);
  }
}

/** A verified `GET /v1/flavors`: the pool's headers say where (zones, region, locations) its machines may go. */
export type FlavorsRequest = Omit<PoolRequest, "route" | "body">;

export interface ShimFrame<E, C extends ShimBaseConfig> {
  /** How the shim names itself in errors: "EC2", "GCE", "Hetzner". */
  name: string;
  readConfig(env: E): { ok: true; config: C } | { ok: false; problems: string[] };
  capabilities(config: C): ShimAnswer;
  /** Why these ids cannot be used by this cloud (they become tags or labels), or null. */
  idProblem?(controllerId: string, poolId: string): string | null;
  run(request: PoolRequest, config: C): Promise<ShimAnswer>;
  /** v1.2: the pool's flavor catalogue (`GET /v1/flavors`); absent: the route is 404, as in a v1 shim. */
  flavors?(request: FlavorsRequest, config: C): Promise<ShimAnswer>;
}

async function handle<E, C extends ShimBaseConfig>(
  frame: ShimFrame<E, C>,
  request: Request,
  env: E,
  log: Record<string, unknown>,
): Promise<ShimAnswer> {
  const url = new URL(request.url);
  if (url.pathname === "/healthz" && request.method === "GET") return answer(200, { ok: true });
  const cfg = frame.readConfig(env);
  if (!cfg.ok) return answer(500, { error: `the ${frame.name} shim is misconfigured: ${cfg.problems.join("; ")}` });
  const config = cfg.config;

  const body = await readBody(request);
  if (body === null) return answer(413, { error: `request body over ${MAX_BODY_BYTES} bytes` });
  const parts = { method: request.method, pathWithQuery: requestTarget(url), body };
  const received = { timestamp: request.headers.get(ShimHeaders.timestamp), signature: request.headers.get(ShimHeaders.signature) };
  let reason = "";
  for (const secret of config.secrets) {
    const check = await verifySignature(secret, parts, received);
    if (check.ok) {
      reason = "";
      break;
    }
    reason ||= check.reason;
  }
  if (reason) {
    log.refused = reason;
    return answer(401, { error: "unauthorized", details: { reason } });
  }

  const route = matchShimRoute(request.method, url.pathname);
  if (route === null || route === "bad_id") return answer(404, { error: `no route ${request.method} ${url.pathname}` });
  if (route === "method_not_allowed") return answer(405, { error: `${request.method} is not allowed on ${url.pathname}` });
  log.operation = route.op;
  if (route.op === "capabilities") return frame.capabilities(config);
  // No shim on this frame offers batch create in its capabilities, so the coordinator never sends one.
  if (route.op === "create_batch") return answer(404, { error: "this shim has no batch create (none in its capabilities)" });

  const controllerId = request.headers.get(ShimHeaders.controllerId) ?? "";
  const poolId = request.headers.get(ShimHeaders.poolId) ?? "";
  const specs = decodeSpecsHeader(request.headers.get(ShimHeaders.poolExtraSpecs) ?? "");
  if (!controllerId || !poolId || !specs.ok) {
    return answer(400, {
      error: `missing or malformed ${ShimHeaders.controllerId}, ${ShimHeaders.poolId} or ${ShimHeaders.poolExtraSpecs}`,
    });
  }
  const idProblem = frame.idProblem?.(controllerId, poolId);
  if (idProblem) return answer(400, { error: idProblem });
  if (config.controllerId && controllerId !== config.controllerId)
    return answer(403, { error: "this shim serves another coordinator (CONTROLLER_ID)" });
  log.scale_set = poolId;
  if ("id" in route) log.instance = route.id;
  if (route.op === "flavors") {
    if (!frame.flavors) return answer(404, { error: "this shim has no flavor catalogue (before protocol v1.2)" });
    return frame.flavors({ controllerId, poolId, specs: specs.value, log }, config);
  }
  // Capabilities and batch create were answered above: what is left is an operation on the pool.
  return frame.run({ route: route as PoolRequest["route"], body, controllerId, poolId, specs: specs.value, log }, config);
}

const toResponse = (a: ShimAnswer) =>
  a.body === undefined
    ? new Response(null, { status: a.status, headers: a.headers })
    : Response.json(a.body, { status: a.status, headers: a.headers });

/** The Worker's handler. A plain object: the contract tests run shims in Node, without the Workers types. */
export function shimWorker<E, C extends ShimBaseConfig>(frame: ShimFrame<E, C>): { fetch(request: Request, env: E): Promise<Response> } {
  return {
    async fetch(request, env) {
      const started = Date.now();
      const log: Record<string, unknown> = {};
      let a: ShimAnswer;
      try {
        a = await handle(frame, request, env, log);
      } catch (err) {
        a = answer(500, { error: `the ${frame.name} shim failed: ${err instanceof Error ? err.message : String(err)}` });
        log.error = err instanceof Error ? err.message : String(err);
      }
      logEvent({
        event: "shim_request",
        method: request.method,
        path: new URL(request.url).pathname,
        status: a.status,
        duration_ms: Date.now() - started,
        ...log,
      });
      return toResponse(a);
    },
  };
}
