import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "../env";
import type { InstanceStatus, RunnerStatus } from "../db/schema";
import { readInstanceToken } from "../scaleset/instance-token";

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

function unauthorized() {
  return new Response(JSON.stringify({ error: "unauthorized" }), {
    status: 401,
    headers: { "content-type": "application/json", "www-authenticate": 'Bearer realm="edgerunner-instance"' },
  });
}

/**
 * Authenticates a runner instance by its own token: valid signature and expiry, the instance
 * it names exists in the scale set it names, for the current create attempt, and is still
 * bootstrapping. Every failure looks the same to the caller.
 */
export const instanceAuth: MiddlewareHandler<InstanceAppEnv> = async (c, next) => {
  const match = /^Bearer\s+(\S+)$/i.exec(c.req.header("authorization") ?? "");
  if (!match) return unauthorized();
  const claims = await readInstanceToken(c.env.INSTANCE_TOKEN_SECRET, match[1]!);
  if (!claims) return unauthorized();
  const row = await c.env.DB.prepare(
    `SELECT id, name, scale_set_id, status, runner_status, create_attempt, agent_id, jit_config_enc, os_type, os_arch
       FROM instances WHERE name = ?`,
  )
    .bind(claims.sub)
    .first<Record<string, any>>();
  if (
    !row ||
    row.scale_set_id !== claims.ss ||
    row.create_attempt !== claims.att ||
    !LIVE_INSTANCE.includes(row.status) ||
    !BOOTSTRAPPING_RUNNER.includes(row.runner_status)
  ) {
    return unauthorized();
  }
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
