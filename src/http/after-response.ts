import type { Context } from "hono";
import type { AppEnv } from "../env";

/** Runs `work` after the response when the platform allows it, otherwise before. */
export function afterResponse(c: Pick<Context<AppEnv>, "executionCtx">, work: Promise<unknown>): Promise<unknown> | undefined {
  let ctx: { waitUntil(p: Promise<unknown>): void } | undefined;
  try {
    ctx = c.executionCtx;
  } catch {
    ctx = undefined;
  }
  if (ctx) {
    ctx.waitUntil(work);
    return undefined;
  }
  return work;
}
