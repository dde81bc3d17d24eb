import type { Context } from "hono";
import { actingAs } from "../auth/in-process";
import type { AppEnv, Env } from "../env";

/** The Worker's own fetch: the dashboard's actions go through the admin API in-process. */
export type ApiDispatch = (req: Request, env: Env, ctx: ExecutionContext | undefined) => Response | Promise<Response>;

export interface ApiAnswer {
  status: number;
  /** The parsed JSON body; the raw text when it is not JSON. */
  // biome-ignore lint/suspicious/noExplicitAny: the dashboard reads the JSON answers of many admin routes
  body: any;
}

function executionCtx(c: Context): ExecutionContext | undefined {
  try {
    return c.executionCtx as ExecutionContext;
  } catch {
    return undefined;
  }
}

/**
 * Calls the admin API as the dashboard's signed-in user (the principal travels with the Request
 * object, src/auth/in-process.ts), so a dashboard action validates, nudges, logs, is allowed by
 * scope and lands in the audit trail exactly as the same API call would.
 */
export async function callAdminApi<E extends AppEnv>(
  c: Context<E>,
  dispatch: ApiDispatch,
  method: string,
  path: string,
  body?: unknown,
): Promise<ApiAnswer> {
  const principal = c.get("principal");
  if (!principal) throw new Error("dashboard action without a signed-in user");
  const req = new Request(new URL(`/api/v1${path}`, c.req.url), {
    method,
    headers: body === undefined ? {} : { "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  actingAs(req, principal);
  const res = await dispatch(req, c.env, executionCtx(c));
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    // keep text
  }
  return { status: res.status, body: parsed };
}
