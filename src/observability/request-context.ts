import { AsyncLocalStorage } from "node:async_hooks";

/** What every log line written while handling one request carries. */
export interface RequestContext {
  requestId: string;
}

const storage = new AsyncLocalStorage<RequestContext>();

/** Runs `fn` with `ctx` visible to every log call it makes, however deep, without passing it along. */
export function withRequestContext<T>(ctx: RequestContext, fn: () => T): T {
  return storage.run(ctx, fn);
}

export function currentRequestId(): string | null {
  return storage.getStore()?.requestId ?? null;
}

// Cloudflare's ray id names the request in Cloudflare's own logs too; elsewhere (tests,
// wrangler dev) a random id does. Either way it is a token of printable ASCII a user can quote.
const RAY = /^[0-9a-f]{16}(-[A-Z]{3})?$/i;

export function requestIdFor(headers: Headers): string {
  const ray = headers.get("cf-ray")?.trim();
  if (ray && RAY.test(ray)) return ray;
  return crypto.randomUUID();
}
