import { logEvent } from "../../src/observability/log.ts";
import { ShimHeaders } from "../../src/providers/shim-protocol.ts";
import { matchShimRoute } from "../../src/providers/shim-routes.ts";
import { requestTarget, verifySignature } from "../../src/providers/shim-signing.ts";
import { decodeSpecsHeader, MAX_BODY_BYTES, readBody } from "../common/shim-request.ts";
import { readConfig, type ShimEnv } from "./config.ts";
import { answer, type ShimAnswer } from "./errors.ts";
import { labelValue } from "./extra-specs.ts";
import { createGceApi } from "./gce-api.ts";
import { capabilities, change, create, get, list, type Operations, removeAll } from "./operations.ts";

/**
 * The Google Compute Engine provider shim: a Cloudflare Worker speaking provider shim protocol
 * v1 (docs/provider-shim-protocol.md) to the coordinator and Compute Engine's REST API to
 * Google (docs/gce-shim.md), as a service account whose key is a Worker secret. Stateless:
 * instance names and labels are its memory.
 *
 * Every /v1 request is verified (HMAC, 300 s window) before anything else runs; then the pool
 * headers are checked, then the operation runs against GCE. One log line per request.
 */

const toResponse = (a: ShimAnswer) =>
  a.body === undefined
    ? new Response(null, { status: a.status, headers: a.headers })
    : Response.json(a.body, { status: a.status, headers: a.headers });

async function handle(request: Request, env: ShimEnv, log: Record<string, unknown>): Promise<ShimAnswer> {
  const url = new URL(request.url);
  if (url.pathname === "/healthz" && request.method === "GET") return answer(200, { ok: true });
  const cfg = readConfig(env);
  if (!cfg.ok) return answer(500, { error: `the GCE shim is misconfigured: ${cfg.problems.join("; ")}` });
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

  const r = matchShimRoute(request.method, url.pathname);
  if (r === null || r === "bad_id") return answer(404, { error: `no route ${request.method} ${url.pathname}` });
  if (r === "method_not_allowed") return answer(405, { error: `${request.method} is not allowed on ${url.pathname}` });
  log.operation = r.op;
  if (r.op === "capabilities") return capabilities(config.project);
  // Protocol v1 only: its capabilities offer no batch create, so the coordinator never sends one.
  if (r.op === "create_batch") return answer(404, { error: "this shim has no batch create (protocol v1)" });

  const controllerId = request.headers.get(ShimHeaders.controllerId) ?? "";
  const poolId = request.headers.get(ShimHeaders.poolId) ?? "";
  const specs = decodeSpecsHeader(request.headers.get(ShimHeaders.poolExtraSpecs) ?? "");
  if (!controllerId || !poolId || !specs.ok) {
    return answer(400, {
      error: `missing or malformed ${ShimHeaders.controllerId}, ${ShimHeaders.poolId} or ${ShimHeaders.poolExtraSpecs}`,
    });
  }
  if (controllerId.length > 256 || poolId.length > 256) return answer(400, { error: "controller and pool ids are at most 256 characters" });
  if (config.controllerId && controllerId !== config.controllerId)
    return answer(403, { error: "this shim serves another coordinator (CONTROLLER_ID)" });
  log.scale_set = poolId;
  if ("id" in r) log.instance = r.id;

  let calls = 0;
  const o: Operations = {
    gce: createGceApi({
      endpoint: config.endpoint,
      account: config.account,
      timeoutMs: config.callTimeoutMs,
      onCall: (c) => {
        calls++;
        if (c.reason)
          logEvent({
            event: "gce_call_failed",
            scale_set: poolId,
            instance: "id" in r ? r.id : null,
            method: c.method,
            status: c.status,
            code: c.reason,
            duration_ms: c.ms,
            error: c.reason,
          });
      },
    }),
    scope: {
      project: config.project,
      controllerId,
      poolId,
      controllerLabel: await labelValue(controllerId),
      poolLabel: await labelValue(poolId),
    },
    headerSpecs: specs.value,
    zones: config.zones,
    createDeadlineMs: config.createDeadlineMs,
  };
  try {
    switch (r.op) {
      case "create":
        return await create(o, body);
      case "list":
        return await list(o);
      case "remove_all":
        return await removeAll(o);
      case "get":
        return await get(o, r.id);
      case "delete":
        return await change(o, r.id, "delete");
      case "start":
        return await change(o, r.id, "start");
      case "stop":
        return await change(o, r.id, "stop");
    }
  } finally {
    log.gce_calls = calls;
  }
}

export default {
  async fetch(request: Request, env: ShimEnv): Promise<Response> {
    const started = Date.now();
    const log: Record<string, unknown> = {};
    let a: ShimAnswer;
    try {
      a = await handle(request, env, log);
    } catch (err) {
      a = answer(500, { error: `the GCE shim failed: ${err instanceof Error ? err.message : String(err)}` });
      log.error = err instanceof Error ? err.message : String(err);
    }
    // Never the body: a create carries the runner's instance token.
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
} satisfies ExportedHandler<ShimEnv>;
