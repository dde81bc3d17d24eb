import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "../env";
import { constantTimeEqual } from "../crypto/constant-time";

/**
 * Admin routes require `Authorization: Bearer <ADMIN_TOKEN>`. Everything under the prefix is
 * protected unless listed in `publicPaths`, so a new route cannot be exposed by forgetting auth.
 */
export function adminAuth(publicPaths: RegExp[]): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    if (publicPaths.some((p) => p.test(c.req.path))) return next();
    const expected = c.env.ADMIN_TOKEN;
    if (!expected) {
      return c.json({ error: "admin API disabled: ADMIN_TOKEN is not configured" }, 503);
    }
    const header = c.req.header("authorization") ?? "";
    const match = /^Bearer\s+(.+)$/i.exec(header);
    if (!match) {
      return c.json({ error: "unauthorized", details: { reason: "missing bearer token" } }, 401, {
        "WWW-Authenticate": 'Bearer realm="edgerunner"',
      });
    }
    if (!(await constantTimeEqual(match[1]!.trim(), expected))) {
      return c.json({ error: "unauthorized", details: { reason: "invalid token" } }, 401, {
        "WWW-Authenticate": 'Bearer realm="edgerunner", error="invalid_token"',
      });
    }
    return next();
  };
}
