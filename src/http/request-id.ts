import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "../env";
import { currentRequestId, inRequestScope } from "../observability/log";

export const REQUEST_ID_HEADER = "X-Request-Id";

/** Cloudflare's ray id ("8f1b2c3d4e5f6a7b-AMS"); anything else in the header is not taken. */
const CF_RAY = /^[0-9A-Za-z-]{1,64}$/;

/**
 * Gives every request one id: Cloudflare's `cf-ray` when there is one (so it matches
 * Cloudflare's own logs), else a fresh UUID. A request dispatched in-process while another is
 * handled (the dashboard's calls to the API) keeps the outer id. The id is answered in
 * X-Request-Id, put in every error body, and added to every log line written meanwhile.
 */
export const requestId: MiddlewareHandler<AppEnv> = async (c, next) => {
  const ray = c.req.header("cf-ray");
  const id = currentRequestId() ?? (ray && CF_RAY.test(ray) ? ray : crypto.randomUUID());
  c.set("requestId", id);
  await inRequestScope(id, next);
  try {
    c.res.headers.set(REQUEST_ID_HEADER, id);
  } catch {
    // Immutable headers (a Response made by Response.redirect or passed through): copy it.
    c.res = new Response(c.res.body, c.res);
    c.res.headers.set(REQUEST_ID_HEADER, id);
  }
};
