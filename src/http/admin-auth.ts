import type { Context, MiddlewareHandler } from "hono";
import { ACCESS_HEADER, accessConfig, verifyAccessJwt } from "../auth/access";
import { hashApiToken, looksLikeApiToken } from "../auth/api-token";
import { inProcessPrincipal } from "../auth/in-process";
import { ADMIN_TOKEN_ACTOR, accessActor, type Principal, scopeAllows, tokenActor } from "../auth/principal";
import { cachedToken, dueForTouch, LAST_USED_INTERVAL_MS, rememberToken, tokenVerdict } from "../auth/token-cache";
import { constantTimeEqual } from "../crypto/constant-time";
import { tokenByHash, touchToken } from "../db/access/api-token-store";
import { createDb } from "../db/client";
import type { AppEnv } from "../env";
import { errorText, logger } from "../observability/log";
import { afterResponse } from "./after-response";
import { adminThrottled, clientKey, countAdminFailure } from "./auth-throttle";
import { ApiError } from "./errors";

/**
 * Who may call the admin API: ADMIN_TOKEN (full admin), a named API token (`edr_…`, scope
 * `read` or `admin`, src/auth/api-token.ts), a Cloudflare Access JWT when Access is configured
 * (src/auth/access.ts), or the dashboard's signed-in user (in-process, src/auth/in-process.ts).
 * Every wrong credential is counted per client, and a client over the limit is refused before
 * its credential is looked at (src/http/auth-throttle.ts).
 */

const bearerOf = (c: Context<AppEnv>): string | null => /^Bearer\s+(.+)$/i.exec(c.req.header("authorization") ?? "")?.[1]?.trim() ?? null;

const unauthorized = (reason: string, realm: string, invalid: boolean) =>
  new ApiError(
    401,
    "unauthorized",
    { reason },
    {
      headers: { "WWW-Authenticate": invalid ? `Bearer realm="${realm}", error="invalid_token"` : `Bearer realm="${realm}"` },
    },
  );

/** A named token's principal, or why it is refused. One D1 lookup by hash, cached briefly (src/auth/token-cache.ts). */
async function namedToken(c: Context<AppEnv>, token: string): Promise<Principal | string> {
  const hash = await hashApiToken(token);
  const now = Date.now();
  let found = cachedToken(hash, now);
  if (!found) {
    found = await tokenByHash(createDb(c.env), hash);
    if (!found) return "invalid token";
    rememberToken(hash, found, now);
  }
  const verdict = tokenVerdict(found, now);
  if (verdict !== "ok") return `token ${verdict}`;
  if (dueForTouch(found.lastUsedAt, now)) {
    found.lastUsedAt = now; // this isolate writes again only a minute from now
    const id = found.id;
    const work = touchToken(createDb(c.env), id, now, LAST_USED_INTERVAL_MS).catch((e) =>
      logger.warn({ event: "token_touch_failed", token_id: id, error: errorText(e) }),
    );
    await afterResponse(c, work);
  }
  return { actor: tokenActor(found.name), scope: found.scope, via: "api" };
}

/**
 * The principal a bearer token stands for: ADMIN_TOKEN when `adminToken` is given and matches,
 * `extra` (e.g. METRICS_TOKEN) when it matches, or a named token. Throws the refusal otherwise.
 */
export async function bearerPrincipal(
  c: Context<AppEnv>,
  opts: { adminToken?: string; extra?: { token: string; principal: Principal }; realm: string },
): Promise<Principal> {
  const client = clientKey(c.req.header("cf-connecting-ip"));
  const throttled = client && adminThrottled(client);
  if (throttled) throw throttled;
  const bearer = bearerOf(c);
  if (!bearer) throw unauthorized("missing bearer token", opts.realm, false);
  const found = await matchBearer(c, bearer, opts);
  if (typeof found !== "string") return found;
  const overLimit = client && (await countAdminFailure(c.env, client));
  if (overLimit) throw overLimit;
  throw unauthorized(found, opts.realm, true);
}

async function matchBearer(
  c: Context<AppEnv>,
  bearer: string,
  opts: { adminToken?: string; extra?: { token: string; principal: Principal } },
): Promise<Principal | string> {
  if (looksLikeApiToken(bearer)) return namedToken(c, bearer);
  if (opts.adminToken && (await constantTimeEqual(bearer, opts.adminToken)))
    return { actor: ADMIN_TOKEN_ACTOR, scope: "admin", via: "api" };
  if (opts.extra && (await constantTimeEqual(bearer, opts.extra.token))) return opts.extra.principal;
  return "invalid token";
}

/** An Access identity from `Cf-Access-Jwt-Assertion`, or the refusal (counted like a wrong token). */
async function accessPrincipal(c: Context<AppEnv>, jwt: string): Promise<Principal> {
  const config = accessConfig(c.env)!;
  const client = clientKey(c.req.header("cf-connecting-ip"));
  const throttled = client && adminThrottled(client);
  if (throttled) throw throttled;
  const result = await verifyAccessJwt(config, jwt);
  if (result.ok) return { actor: accessActor(result.identity), scope: config.scope, via: "api" };
  logger.warn({ event: "access_refused", error: result.reason });
  if (result.unavailable)
    throw new ApiError(503, "Cloudflare Access keys unavailable; try again, or use an API token", { reason: result.reason });
  const overLimit = client && (await countAdminFailure(c.env, client));
  if (overLimit) throw overLimit;
  throw new ApiError(401, "unauthorized", { reason: result.reason });
}

/** Who is calling: the dashboard's user, a bearer token, or an Access identity (in that order). */
async function authenticate(c: Context<AppEnv>): Promise<Principal> {
  const inProcess = inProcessPrincipal(c.req.raw);
  if (inProcess) return inProcess;
  const access = accessConfig(c.env);
  const jwt = c.req.header(ACCESS_HEADER);
  // An explicit bearer token wins: behind Access, a script's token says more than the browser's sign-in.
  if (access && jwt && !c.req.header("authorization")) return accessPrincipal(c, jwt);
  if (!c.env.ADMIN_TOKEN && !access && !bearerOf(c)) throw new ApiError(503, "admin API disabled: ADMIN_TOKEN is not configured");
  return bearerPrincipal(c, { adminToken: c.env.ADMIN_TOKEN, realm: "edgerunner" });
}

const forbidden = (principal: Principal, method: string, needs: "admin") =>
  new ApiError(403, `this ${principal.scope}-scoped identity may not do this`, { scope: principal.scope, needs, method });

/**
 * Admin routes require a principal. Everything under the prefix is protected unless listed in
 * `publicPaths`, so a new route cannot be exposed by forgetting auth; a `read` principal may
 * only GET (and HEAD).
 */
export function adminAuth(publicPaths: RegExp[]): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    if (publicPaths.some((p) => p.test(c.req.path))) return next();
    const principal = await authenticate(c);
    c.set("principal", principal);
    if (!scopeAllows(principal.scope, c.req.method)) throw forbidden(principal, c.req.method, "admin");
    return next();
  };
}

/** For routes only an admin may even read (token management). */
export const adminOnly: MiddlewareHandler<AppEnv> = async (c, next) => {
  const principal = c.get("principal");
  if (principal?.scope !== "admin") throw forbidden(principal ?? { actor: "", scope: "read", via: "api" }, c.req.method, "admin");
  return next();
};
