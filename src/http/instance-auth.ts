import type { Context, MiddlewareHandler } from "hono";
import { findInstance, findInstanceWithJitConfig, type InstanceSummary } from "../db/runner/instance-lookups";
import type { RunnerSetup } from "../db/scaleset/runner-setup-store";
import type { AppEnv } from "../env";
import { logEvent } from "../observability/log";
import { instanceRefusal, reportedIn } from "../scaleset/runner/instance-access";
import { type InstanceTokenClaims, readInstanceToken } from "../scaleset/runner/instance-token";
import { ApiError, errorResponse } from "./errors";

/**
 * The instance a runner token speaks for, as it is in D1 at the time of the call; with its
 * sealed JIT config only on the paths that asked for it (`withJitConfig`).
 */
export type CallingInstance = InstanceSummary & { jitConfigEnc?: string | null };

export type InstanceAppEnv = AppEnv & {
  Variables: {
    instance: CallingInstance;
    instanceClaims: InstanceTokenClaims;
    /** The instance's scale set's runner setup, when a path's `read` read it with the instance. */
    runnerSetup: RunnerSetup | null | undefined;
    /** When a path's `read` claimed the instance's on-boot JIT mint with it: the claim's time, or null if it lost. */
    jitClaimedAt: number | null | undefined;
  };
};

/** Why a call was refused goes to the log (never the token); the caller only learns it was. */
export function refuseInstance(c: Context, reason: string, claims?: { sub: string; ss: string }) {
  logEvent({ event: "instance_auth_refused", path: c.req.path, reason, instance: claims?.sub, scale_set: claims?.ss });
  return errorResponse(
    c,
    new ApiError(401, "unauthorized", null, { headers: { "www-authenticate": 'Bearer realm="edgerunner-instance"' } }),
  );
}

interface InstanceAuthOptions {
  /** Paths whose answer is for the bootstrap only: a runner that has reported in is told 409. */
  servedOnce?: (path: string) => boolean;
  /** Paths on which the instance is read with its sealed JIT config (~3 KB, which only the credentials route opens). */
  withJitConfig?: (path: string) => boolean;
  /**
   * Reads the instance on paths whose handler needs more in the same D1 round trip (the scale
   * set's runner setup, an on-boot mint's claim), setting what else it read on the context;
   * returns undefined where the plain read will do. The row it returns is checked as any other.
   */
  read?: (c: Context<InstanceAppEnv>, claims: InstanceTokenClaims, withJitConfig: boolean) => Promise<CallingInstance | null> | undefined;
  /**
   * Paths whose handler has the instance checked elsewhere (a status report: the scale set
   * object reads it in its own turn, with instanceRefusal): only the token is checked here, and
   * its claims are `instanceClaims`. The handler calls instanceFromClaims before answering
   * anything but the object's verdict (a malformed body), so a refused token never learns more.
   */
  checkedByHandler?: (path: string) => boolean;
}

/** The instance the claims name, read from D1 and checked (instanceRefusal), or the refusal to answer. */
export async function instanceFromClaims(
  c: Context<InstanceAppEnv>,
  claims: InstanceTokenClaims,
  opts: InstanceAuthOptions = {},
): Promise<CallingInstance | Response> {
  const withJitConfig = opts.withJitConfig?.(c.req.path) ?? false;
  const ownRead = opts.read?.(c, claims, withJitConfig);
  const row: CallingInstance | null =
    ownRead !== undefined
      ? await ownRead
      : withJitConfig
        ? await findInstanceWithJitConfig(c.env.DB, claims.sub)
        : await findInstance(c.env.DB, claims.sub);
  return checkedInstance(c, row, claims, opts);
}

/** A row read for the claims, checked (instanceRefusal): the instance, or the refusal to answer. */
export function checkedInstance(
  c: Context<InstanceAppEnv>,
  row: CallingInstance | null,
  claims: InstanceTokenClaims,
  opts: Pick<InstanceAuthOptions, "servedOnce"> = {},
): CallingInstance | Response {
  const refusal = instanceRefusal(row, claims);
  if (refusal && reportedIn(row, refusal) && opts.servedOnce?.(c.req.path)) {
    logEvent({ event: "instance_auth_refused", path: c.req.path, reason: refusal, instance: claims.sub, scale_set: claims.ss });
    return errorResponse(
      c,
      new ApiError(409, "served only while the runner bootstraps; this runner has reported in", { runner_status: row!.runnerStatus }),
    );
  }
  if (refusal || !row) return refuseInstance(c, refusal ?? "no such instance", claims);
  return row;
}

/**
 * Authenticates a runner instance by its own token: valid signature and expiry, the instance
 * it names exists in the scale set it names, for the current create attempt, and is still
 * bootstrapping (instanceRefusal). Every failure looks the same to the caller, except where
 * `servedOnce` says a path's answer was for the bootstrap only: there a runner that has
 * reported in (its token is genuine, its instance live) is told 409, so a machine knows it asks
 * too late rather than with a bad token.
 */
export function instanceAuthWith(opts: InstanceAuthOptions = {}): MiddlewareHandler<InstanceAppEnv> {
  return async (c, next) => {
    const match = /^Bearer\s+(\S+)$/i.exec(c.req.header("authorization") ?? "");
    if (!match) return refuseInstance(c, "no bearer token");
    const claims = await readInstanceToken(c.env.INSTANCE_TOKEN_SECRET, match[1]!);
    if (!claims) return refuseInstance(c, "invalid or expired token");
    c.set("instanceClaims", claims);
    if (!opts.checkedByHandler?.(c.req.path)) {
      const found = await instanceFromClaims(c, claims, opts);
      if (found instanceof Response) return found;
      c.set("instance", found);
    }
    await next();
  };
}

export const instanceAuth: MiddlewareHandler<InstanceAppEnv> = instanceAuthWith();
