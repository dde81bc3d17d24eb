import type { Context, MiddlewareHandler } from "hono";
import type { AppEnv } from "../env";
import { constantTimeEqual } from "../crypto/constant-time";
import { adminThrottled, clientKey, countAdminFailure } from "./auth-throttle";
import { ApiError } from "./errors";

/**
 * Checks `Authorization: Bearer <expected>` (compared in constant time) and throws the refusal.
 * Wrong tokens are counted per client, and a client over the limit is refused before its token
 * is compared (src/http/auth-throttle.ts).
 */
export async function requireBearer(c: Context<AppEnv>, expected: string, realm: string): Promise<void> {
  const client = clientKey(c.req.header("cf-connecting-ip"));
  const throttled = client && adminThrottled(client);
  if (throttled) throw throttled;
  const match = /^Bearer\s+(.+)$/i.exec(c.req.header("authorization") ?? "");
  if (!match) {
    throw new ApiError(401, "unauthorized", { reason: "missing bearer token" }, { headers: { "WWW-Authenticate": `Bearer realm="${realm}"` } });
  }
  if (!(await constantTimeEqual(match[1]!.trim(), expected))) {
    const overLimit = client && (await countAdminFailure(c.env, client));
    if (overLimit) throw overLimit;
    throw new ApiError(401, "unauthorized", { reason: "invalid token" }, {
      headers: { "WWW-Authenticate": `Bearer realm="${realm}", error="invalid_token"` },
    });
  }
}

/**
 * Admin routes require `Authorization: Bearer <ADMIN_TOKEN>`. Everything under the prefix is
 * protected unless listed in `publicPaths`, so a new route cannot be exposed by forgetting auth.
 */
export function adminAuth(publicPaths: RegExp[]): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    if (publicPaths.some((p) => p.test(c.req.path))) return next();
    const expected = c.env.ADMIN_TOKEN;
    if (!expected) throw new ApiError(503, "admin API disabled: ADMIN_TOKEN is not configured");
    await requireBearer(c, expected, "edgerunner");
    return next();
  };
}
