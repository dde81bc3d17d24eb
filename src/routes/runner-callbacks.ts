import { z } from "@hono/zod-openapi";
import { type Context, Hono } from "hono";
import { readAndRecordSystemInfo, recordSystemInfo } from "../db/runner/runner-report-store";
import { runnerStatuses } from "../db/runner/schema";
import { ApiError, errorResponse, invalidTransition, zodDetails } from "../http/errors";
import {
  type CallingInstance,
  checkedInstance,
  type InstanceAppEnv,
  instanceAuthWith,
  instanceFromClaims,
  refuseInstance,
} from "../http/instance-auth";
import { errorJson } from "../http/openapi";
import type { Router } from "../http/router";
import { logEvent as log, logger } from "../observability/log";
import { usableTokenStates } from "../scaleset/runner/instance-access";
import { claimOnReport, claimsInAdvance } from "../scaleset/runner/runner-identity";
import { scaleSetObject } from "../scaleset/stub";

/**
 * Where a bootstrapping runner reports progress (GARM's callback routes, same bodies). GARM's
 * scripts post with curl and no Content-Type, so bodies are read as JSON whatever the header says.
 */

const StatusReport = z
  .object({
    status: z.enum(runnerStatuses),
    message: z.string().max(4096).default(""),
    agent_id: z.int().nullable().optional(),
  })
  .openapi("RunnerStatusReport");

const SystemInfo = z
  .object({
    os_name: z.string().max(256).optional(),
    os_version: z.string().max(256).optional(),
    agent_id: z.int().nullable().optional(),
  })
  .openapi("RunnerSystemInfo");

async function readJson<T extends z.ZodType>(
  req: Request,
  schema: T,
): Promise<{ ok: true; value: z.infer<T> } | { ok: false; error: ApiError }> {
  const text = await req.text();
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return { ok: false, error: new ApiError(400, "malformed JSON body", null, { code: "malformed_json" }) };
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success)
    return { ok: false, error: new ApiError(400, "invalid request body", zodDetails(parsed.error), { code: "invalid_body" }) };
  return { ok: true, value: parsed.data };
}

/**
 * A status report. Older GARM templates post it to the callback URL itself rather than to
 * `{callback-url}/status`, and swallow a failure: both paths take it.
 */
/** A callback body that does not parse: logged (without the body) and answered with its error. */
function invalidCallback(c: Context<InstanceAppEnv>, inst: CallingInstance, route: string, error: ApiError) {
  log({ event: "runner_callback_invalid", route, scale_set: inst.scaleSetId, instance: inst.name, error: error.message });
  return errorResponse(c, error);
}

const STATUS_PATHS = ["/callbacks", "/callbacks/status"];

// A status report's instance is checked by the scale set object, which reads it anyway in the
// report's serialized turn: one D1 read per report instead of two (the route's, then the object's).
// System info is checked by its handler, on the read that goes with its write (one round trip).
const CHECKED_BY_HANDLER = /\/callbacks(\/status|\/system-info)?\/?$/;
const callbackAuth = instanceAuthWith({ checkedByHandler: (path) => CHECKED_BY_HANDLER.test(path) });

export const runnerCallbackRoutes = new Hono<InstanceAppEnv>()
  .use("/callbacks", callbackAuth)
  .use("/callbacks/*", callbackAuth)
  .on("POST", STATUS_PATHS, async (c) => {
    const claims = c.get("instanceClaims");
    const body = await readJson(c.req.raw, StatusReport);
    if (!body.ok) {
      // A refused token learns it is refused, never what was wrong with its body.
      const inst = await instanceFromClaims(c, claims);
      return inst instanceof Response ? inst : invalidCallback(c, inst, "status", body.error);
    }
    const result = await scaleSetObject(c.env, claims.ss).runnerReport(claims.ss, claims.sub, claims.att, {
      status: body.value.status,
      message: body.value.message,
      agentId: body.value.agent_id ?? null,
    });
    if ("error" in result) {
      if (result.error === "unauthorized") return refuseInstance(c, result.reason, claims);
      log({ event: "runner_status_refused", scale_set: claims.ss, instance: claims.sub, to: body.value.status, reason: result.error });
      if (result.error === "gone") return errorResponse(c, new ApiError(401, "unauthorized"));
      return errorResponse(
        c,
        invalidTransition(400, `runner status cannot go from ${result.from} to ${result.to}`, { from: result.from, to: result.to }),
      );
    }
    return c.body(null, 200);
  })
  .post("/callbacks/system-info", async (c) => {
    const claims = c.get("instanceClaims");
    const body = await readJson(c.req.raw, SystemInfo);
    if (!body.ok) {
      // As a status report: a refused token learns it is refused, never what was wrong with its body.
      const inst = await instanceFromClaims(c, claims);
      return inst instanceof Response ? inst : invalidCallback(c, inst, "system-info", body.error);
    }
    const reported = body.value.agent_id ?? null;
    const info = { osName: body.value.os_name ?? null, osVersion: body.value.os_version ?? null };
    const at = Date.now();
    // Read and written in one round trip: the write holds the token rule (so a refused token
    // writes nothing) and is decided for each runner id the claim rule tells apart.
    const found = await readAndRecordSystemInfo(
      c.env.DB,
      { name: claims.sub, scaleSetId: claims.ss, createAttempt: claims.att },
      usableTokenStates(claims),
      info,
      claimsInAdvance(reported).map(({ agentId, claim }) => ({ agentId, reportedAgentId: claim.record })),
      at,
    );
    const inst = checkedInstance(c, found.instance, claims);
    if (inst instanceof Response) return inst;
    // A reported id is a claim, kept apart from GitHub's own (runner-identity.ts): removal
    // confirms it at GitHub, so a machine cannot make the scale set remove another runner.
    const claim = claimOnReport(inst.agentId, reported);
    // An instance holding a runner id none of the writes was decided for: written apart, as before.
    if (!found.recorded) await recordSystemInfo(c.env.DB, inst, { ...info, reportedAgentId: claim.record }, at);
    // Debug: the instance row keeps what it said (os_name, os_version, its claimed runner id).
    logger.debug({
      event: "runner_system_info",
      scale_set: inst.scaleSetId,
      instance: inst.name,
      os_name: body.value.os_name,
      os_version: body.value.os_version,
      reported_agent_id: body.value.agent_id ?? null,
    });
    if (claim.rejected) {
      log({
        event: "runner_id_claim_rejected",
        scale_set: inst.scaleSetId,
        instance: inst.name,
        runner_id: body.value.agent_id,
        reason: "GitHub gave this runner another id",
        agent_id: inst.agentId,
      });
    }
    return c.body(null, 200);
  });

const instanceSecurity = [{ instanceToken: [] }];
const errors = {
  400: errorJson("Invalid body or a forbidden runner status change"),
  401: errorJson("Missing, invalid or spent instance token"),
};

/** The callback routes take their bodies by hand, so they are described here for the OpenAPI document. */
export function documentRunnerCallbacks(app: Router, prefix: string) {
  app.openAPIRegistry.registerComponent("securitySchemes", "instanceToken", {
    type: "http",
    scheme: "bearer",
    description: "The instance-token handed to the provider in the BootstrapInstance",
  });
  for (const path of STATUS_PATHS) {
    app.openAPIRegistry.registerPath({
      method: "post",
      path: `${prefix}${path}`,
      tags: ["Runner bootstrap"],
      summary: `A runner reports its status (JSON body, any Content-Type)${path === "/callbacks" ? ": older GARM templates post here" : ""}`,
      security: instanceSecurity,
      request: { body: { content: { "application/json": { schema: StatusReport } } } },
      responses: { 200: { description: "Recorded" }, ...errors },
    });
  }
  app.openAPIRegistry.registerPath({
    method: "post",
    path: `${prefix}/callbacks/system-info`,
    tags: ["Runner bootstrap"],
    summary: "A runner reports its OS (JSON body, any Content-Type)",
    security: instanceSecurity,
    request: { body: { content: { "application/json": { schema: SystemInfo } } } },
    responses: { 200: { description: "Recorded" }, ...errors },
  });
}
