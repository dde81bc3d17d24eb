import type { Context, MiddlewareHandler } from "hono";
import { routePath } from "hono/route";
import { auditChanges } from "../audit/redact";
import { boundedRefusal, isRefusal, REFUSAL_WINDOW_MS, REFUSED_ENTRIES_PER_ACTOR_PER_MINUTE, refusalSummary } from "../audit/refusal";
import { isWrite, type Principal } from "../auth/principal";
import { insertAudit, insertRefusal } from "../db/access/audit-store";
import { createDb } from "../db/client";
import type { AppEnv } from "../env";
import { errorText, logError } from "../observability/log";

/**
 * Records every authenticated admin write (API and dashboard: the dashboard's actions are API
 * calls) once the handler has answered, so the entry carries the result: one D1 insert per write.
 * Mounted before admin-auth, so refusals of an authenticated caller (a `read` token's write: 403)
 * are recorded too; a request nobody authenticated (401, 429) is not: it names no one, and
 * storing it would let anyone fill the table. A refused write (4xx) leaves a short trace
 * instead of its body, at most a few per actor a minute (src/audit/refusal.ts): otherwise a
 * caller that may only read could fill it just as well. A failed insert is logged, never turned
 * into an error: the write it describes has happened.
 */
export const auditTrail: MiddlewareHandler<AppEnv> = async (c, next) => {
  await next();
  const principal = c.get("principal");
  if (!principal || !isWrite(c.req.method)) return;
  try {
    if (isRefusal(c.res.status)) await recordRefusal(c, principal);
    else {
      await insertAudit(createDb(c.env), {
        at: Date.now(),
        actor: principal.actor,
        via: principal.via,
        method: c.req.method,
        route: routePath(c) || c.req.path,
        path: c.req.path,
        resource: await resourceOf(c),
        status: c.res.status,
        requestId: c.get("requestId"),
        changes: auditChanges(await jsonBody(c), c.req.query()),
      });
    }
  } catch (e) {
    logError({ event: "audit_write_failed", method: c.req.method, path: c.req.path, status: c.res.status, error: errorText(e) });
  }
};

/** A refused write: the answer's code and message, never the request's body or query; throttled per actor. */
async function recordRefusal(c: Context<AppEnv>, principal: Principal): Promise<void> {
  const now = Date.now();
  const request = boundedRefusal({
    method: c.req.method,
    route: routePath(c) || c.req.path,
    path: c.req.path,
    resource: await resourceOf(c),
  });
  await insertRefusal(
    c.env.DB,
    {
      at: now,
      actor: principal.actor,
      via: principal.via,
      ...request,
      status: c.res.status,
      requestId: c.get("requestId"),
      refusal: refusalSummary(await answerJson(c)),
    },
    { windowStart: now - REFUSAL_WINDOW_MS, limit: REFUSED_ENTRIES_PER_ACTOR_PER_MINUTE },
  );
}

/** The answer's JSON (the API's error shape for a 4xx), read from a copy so the client still gets it. */
async function answerJson(c: Context<AppEnv>): Promise<unknown> {
  if (!/\bjson\b/i.test(c.res.headers.get("content-type") ?? "")) return undefined;
  try {
    return await c.res.clone().json();
  } catch {
    return undefined;
  }
}

/** The request's JSON (already parsed by the route's validator, so cached), if it had one. */
async function jsonBody(c: Context<AppEnv>): Promise<unknown> {
  if (!/\bjson\b/i.test(c.req.header("content-type") ?? "")) return undefined;
  try {
    return await c.req.json();
  } catch {
    return undefined;
  }
}

/** The resource written: the route's last path parameter, or what a create answered with (its id, else its name). */
async function resourceOf(c: Context<AppEnv>): Promise<string | null> {
  let params: Record<string, string> = {};
  try {
    params = c.req.param() as Record<string, string>;
  } catch {
    params = {};
  }
  const values = Object.values(params).filter((v) => typeof v === "string" && v !== "");
  if (values.length) return values[values.length - 1]!;
  if (c.res.status === 201 && /\bjson\b/.test(c.res.headers.get("content-type") ?? "")) {
    try {
      const body = (await c.res.clone().json()) as { id?: unknown; name?: unknown };
      if (typeof body?.id === "string" || typeof body?.id === "number") return String(body.id);
      if (typeof body?.name === "string") return body.name;
    } catch {
      // not JSON after all
    }
  }
  return null;
}
