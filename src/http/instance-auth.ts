import type { Context, MiddlewareHandler } from "hono";
import { findInstance, findInstanceWithJitConfig, type InstanceSummary } from "../db/instance-store";
import type { InstanceStatus, RunnerStatus } from "../db/schema";
import type { AppEnv } from "../env";
import { logEvent } from "../observability/log";
import { readInstanceToken } from "../scaleset/instance-token";
import { ApiError, errorResponse } from "./errors";

/**
 * The instance a runner token speaks for, as it is in D1 at the time of the call; with its
 * sealed JIT config only on the paths that asked for it (`withJitConfig`).
 */
export type CallingInstance = InstanceSummary & { jitConfigEnc?: string | null };

export type InstanceAppEnv = AppEnv & { Variables: { instance: CallingInstance } };

/** Only a runner that is still bootstrapping may use its token (GARM's rule). */
const BOOTSTRAPPING_RUNNER: readonly RunnerStatus[] = ["pending", "installing"];
const LIVE_INSTANCE: readonly InstanceStatus[] = ["creating", "running"];

/** Why a call was refused goes to the log (never the token); the caller only learns it was. */
function unauthorized(c: Context, reason: string, claims?: { sub: string; ss: string }) {
  logEvent({ event: "instance_auth_refused", path: c.req.path, reason, instance: claims?.sub, scale_set: claims?.ss });
  return errorResponse(
    c,
    new ApiError(401, "unauthorized", null, { headers: { "www-authenticate": 'Bearer realm="edgerunner-instance"' } }),
  );
}

/**
 * Authenticates a runner instance by its own token: valid signature and expiry, the instance
 * it names exists in the scale set it names, for the current create attempt, and is still
 * bootstrapping. Every failure looks the same to the caller, except where `servedOnce` says a
 * path's answer was for the bootstrap only: there a runner that has reported in (its token is
 * genuine, its instance live) is told 409, so a machine knows it asks too late rather than
 * with a bad token. `withJitConfig` says on which paths the instance is read with its sealed JIT
 * config (~3 KB, which only the credentials route opens).
 */
export function instanceAuthWith(
  opts: { servedOnce?: (path: string) => boolean; withJitConfig?: (path: string) => boolean } = {},
): MiddlewareHandler<InstanceAppEnv> {
  return async (c, next) => {
    const match = /^Bearer\s+(\S+)$/i.exec(c.req.header("authorization") ?? "");
    if (!match) return unauthorized(c, "no bearer token");
    const claims = await readInstanceToken(c.env.INSTANCE_TOKEN_SECRET, match[1]!);
    if (!claims) return unauthorized(c, "invalid or expired token");
    const row: CallingInstance | null = opts.withJitConfig?.(c.req.path)
      ? await findInstanceWithJitConfig(c.env.DB, claims.sub)
      : await findInstance(c.env.DB, claims.sub);
    const refusal = !row
      ? "no such instance"
      : row.scaleSetId !== claims.ss
        ? "instance is in another scale set"
        : row.createAttempt !== claims.att
          ? "token is for another create attempt"
          : !LIVE_INSTANCE.includes(row.status)
            ? `instance is ${row.status}`
            : !BOOTSTRAPPING_RUNNER.includes(row.runnerStatus)
              ? `runner is ${row.runnerStatus}`
              : null;
    const reportedIn = row !== null && refusal === `runner is ${row.runnerStatus}`;
    if (reportedIn && opts.servedOnce?.(c.req.path)) {
      logEvent({ event: "instance_auth_refused", path: c.req.path, reason: refusal, instance: claims.sub, scale_set: claims.ss });
      return errorResponse(
        c,
        new ApiError(409, "served only while the runner bootstraps; this runner has reported in", { runner_status: row!.runnerStatus }),
      );
    }
    if (refusal || !row) return unauthorized(c, refusal ?? "no such instance", claims);
    c.set("instance", row);
    await next();
  };
}

export const instanceAuth: MiddlewareHandler<InstanceAppEnv> = instanceAuthWith();
