import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "../env";
import { requestIdFor, withRequestContext } from "../observability/request-context";

export const REQUEST_ID_HEADER = "X-Request-Id";

/**
 * Names the request: the id goes into the response's X-Request-Id header, every error body
 * and every log line written while the request is handled, so a user can quote one value and
 * we can find the request's whole story with `wrangler tail`.
 */
export const requestContext: MiddlewareHandler<AppEnv> = async (c, next) => {
  const requestId = requestIdFor(c.req.raw.headers);
  c.set("requestId", requestId);
  await withRequestContext({ requestId }, next);
  if (c.res.headers.has(REQUEST_ID_HEADER)) return;
  try {
    c.res.headers.set(REQUEST_ID_HEADER, requestId);
  } catch {
    // Some responses (a fetched one passed through) have immutable headers: copy them.
    c.res = new Response(c.res.body, c.res);
    c.res.headers.set(REQUEST_ID_HEADER, requestId);
  }
};
