import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "../env";
import { constantTimeEqual } from "../crypto/constant-time";
import { errorResponse } from "./errors";

/**
 * Admin routes require `Authorization: Bearer <ADMIN_TOKEN>`. Everything under the prefix is
 * protected unless listed in `publicPaths`, so a new route cannot be exposed by forgetting auth.
 */
export function adminAuth(publicPaths: RegExp[]): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    if (publicPaths.some((p) => p.test(c.req.path))) return next();
    const expected = c.env.ADMIN_TOKEN;
    if (!expected) {
      return errorResponse(c, 503, "admin API disabled: ADMIN_TOKEN is not configured");
    }
    const header = c.req.header("authorization") ?? "";
    const match = /^Bearer\s+(.+)$/i.exec(header);
    if (!match) {
      return errorResponse(c, 401, "unauthorized", { reason: "missing bearer token" }, { headers: { "WWW-Authenticate": 'Bearer realm="edgerunner"' } });
    }
    if (!(await constantTimeEqual(match[1]!.trim(), expected))) {
      return errorResponse(c, 401, "unauthorized", { reason: "invalid token" }, {
        headers: { "WWW-Authenticate": 'Bearer realm="edgerunner", error="invalid_token"' },
      });
    }
    return next();
  };
}
