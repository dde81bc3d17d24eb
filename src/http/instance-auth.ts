import type { Context, MiddlewareHandler } from "hono";
import type { AppEnv } from "../env";
import type { InstanceStatus, RunnerStatus } from "../db/schema";
import { readInstanceToken } from "../scaleset/instance-token";
import { logEvent } from "../observability/log";
import { ApiError, errorResponse } from "./errors";

export interface CallingInstance {
  id: string;
  name: string;
  scaleSetId: string;
  status: InstanceStatus;
  runnerStatus: RunnerStatus;
  createAttempt: number;
  agentId: number | null;
  jitConfigEnc: string | null;
  osType: string | null;
  osArch: string | null;
}

export type InstanceAppEnv = AppEnv & { Variables: { instance: CallingInstance } };

/** Only a runner that is still bootstrapping may use its token (GARM's rule). */
const BOOTSTRAPPING_RUNNER: readonly RunnerStatus[] = ["pending", "installing"];
const LIVE_INSTANCE: readonly InstanceStatus[] = ["creating", "running"];

/** Why a call was refused goes to the log (never the token); the caller only learns it was. */
function unauthorized(c: Context, reason: string, claims?: { sub: string; ss: string }) {
  logEvent({ event: "instance_auth_refused", path: c.req.path, reason, instance: claims?.sub, scale_set: claims?.ss });
  return errorResponse(c, new ApiError(401, "unauthorized", null, { headers: { "www-authenticate": 'Bearer realm="edgerunner-instance"' } }));
}

/**
 * Authenticates a runner instance by its own token: valid signature and expiry, the instance
 * it names exists in the scale set it names, for the current create attempt, and is still
 * bootstrapping. Every failure looks the same to the caller.
 */
export const instanceAuth: MiddlewareHandler<InstanceAppEnv> = async (c, next) => {
  const match = /^Bearer\s+(\S+)$/i.exec(c.req.header("authorization") ?? "");
  if (!match) return unauthorized(c, "no bearer token");
  const claims = await readInstanceToken(c.env.INSTANCE_TOKEN_SECRET, match[1]!);
  if (!claims) return unauthorized(c, "invalid or expired token");
  const row = await c.env.DB.prepare(
    `SELECT id, name, scale_set_id, status, runner_status, create_attempt, agent_id, jit_config_enc, os_type, os_arch
       FROM instances WHERE name = ?`,
  )
    .bind(claims.sub)
    .first<Record<string, any>>();
  const refusal = !row
    ? "no such instance"
    : row.scale_set_id !== claims.ss
      ? "instance is in another scale set"
      : row.create_attempt !== claims.att
        ? "token is for another create attempt"
        : !LIVE_INSTANCE.includes(row.status)
          ? `instance is ${row.status}`
          : !BOOTSTRAPPING_RUNNER.includes(row.runner_status)
            ? `runner is ${row.runner_status}`
            : null;
  if (refusal || !row) return unauthorized(c, refusal ?? "no such instance", claims);
  c.set("instance", {
    id: row.id,
    name: row.name,
    scaleSetId: row.scale_set_id,
    status: row.status,
    runnerStatus: row.runner_status,
    createAttempt: row.create_attempt,
    agentId: row.agent_id,
    jitConfigEnc: row.jit_config_enc,
    osType: row.os_type,
    osArch: row.os_arch,
  });
  await next();
};
