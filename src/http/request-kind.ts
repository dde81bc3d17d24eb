import { WEBHOOK_PATH } from "../lib/webhook-url";

/**
 * What a Worker request is, for the usage tally (lib/usage-tally.ts) and /metrics' `operation`
 * label: a few kinds a person can act on ("the dashboard costs this much"), never a raw path,
 * which would give every instance name and id a series of its own.
 */
export type RequestKind = "webhook" | "bootstrap" | "shim_callback" | "dashboard" | "metrics" | "api" | "other";

const WEBHOOKS = WEBHOOK_PATH.slice(0, WEBHOOK_PATH.lastIndexOf("/"));

export function requestKind(pathname: string): RequestKind {
  if (pathname.startsWith(`${WEBHOOKS}/`)) return "webhook";
  // What runners ask for while they boot and report (routes/metadata.ts, routes/runner-callbacks.ts).
  if (/^\/api\/v1\/(metadata|callbacks)(\/|$)/.test(pathname)) return "bootstrap";
  // A shim's answer to a long operation (routes/provider-callbacks.ts).
  if (/^\/api\/v1\/providers\/[^/]+\/callbacks\/?$/.test(pathname)) return "shim_callback";
  if (pathname === "/ui" || pathname.startsWith("/ui/")) return "dashboard";
  if (pathname === "/metrics") return "metrics";
  if (pathname.startsWith("/api/")) return "api";
  return "other";
}
