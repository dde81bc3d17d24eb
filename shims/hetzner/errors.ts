import { answer, type ShimAnswer } from "../common/shim-worker.ts";
import type { HcloudError } from "./hcloud-api.ts";

/**
 * How a Hetzner failure is answered to the coordinator (docs/provider-shim-protocol.md, Errors),
 * in the EC2 shim's manner: the status decides whether it retries (429/5xx) or gives up (other
 * 4xx), the message is what a person reads on the instance. Hetzner's codes:
 * https://docs.hetzner.cloud/reference/cloud#errors. Pure.
 */

export { answer, type ShimAnswer };

/** Not this server type, location or moment: another attempt (or a later one) may work. */
const CAPACITY = new Set(["resource_unavailable", "placement_error", "resource_limit_exceeded", "unavailable"]);
/** Hetzner is busy or changing something: the same call later should work. */
const TRANSIENT = new Set(["locked", "conflict", "maintenance", "service_error", "timeout", "unreachable"]);

export const isCapacityError = (code: string) => CAPACITY.has(code);

export type HcloudErrorClass = "not_found" | "throttled" | "credentials" | "not_allowed" | "capacity" | "transient" | "server" | "refused";

export function classifyHcloudError(e: HcloudError): HcloudErrorClass {
  if (e.code === "not_found") return "not_found";
  if (e.code === "rate_limit_exceeded" || e.status === 429) return "throttled";
  if (e.code === "unauthorized" || e.status === 401) return "credentials";
  if (e.code === "forbidden" || e.code === "token_readonly") return "not_allowed";
  if (CAPACITY.has(e.code)) return "capacity";
  if (TRANSIENT.has(e.code)) return "transient";
  if (e.status === 0 || e.status >= 500) return "server";
  return "refused";
}

// The coordinator keeps the first 512 characters of an error: Hetzner's own message comes first, cut short.
const said = (e: HcloudError) => `${e.code}: ${e.message.length > 240 ? `${e.message.slice(0, 240)}…` : e.message}`;

/** Seconds until Hetzner's rate limit has room again (at least 1, at most 5 minutes), from RateLimit-Reset. */
export function retryAfter(e: HcloudError, nowMs = Date.now()): string {
  if (!e.rateLimitReset) return "5";
  return String(Math.min(300, Math.max(1, Math.ceil(e.rateLimitReset - nowMs / 1000))));
}

/**
 * The answer for a failed Hetzner call. `context` leads the message (e.g. what the create
 * tried). Rate limits, capacity, limits and Hetzner-side trouble are retryable (503/502);
 * the token is permanent (403) with what to fix; an unknown server is 404; Hetzner refusing the
 * parameters (unknown image, bad firewall id, …) is permanent (422).
 */
export function hcloudErrorAnswer(what: string, e: HcloudError, context = ""): ShimAnswer {
  const lead = context ? `${context}: ` : "";
  switch (classifyHcloudError(e)) {
    case "not_found":
      return answer(404, { error: `${lead}no such server (${e.code})` });
    case "throttled":
      return answer(
        503,
        { error: `${lead}Hetzner Cloud is rate limiting the project's API token (${e.code}); try again later` },
        { "retry-after": retryAfter(e) },
      );
    case "credentials":
      return answer(403, {
        error: `${lead}Hetzner Cloud refused the shim's API token on ${what} (${said(e)}); set HCLOUD_TOKEN to a valid token of the project (wrangler secret put HCLOUD_TOKEN)`,
      });
    case "not_allowed":
      return answer(403, {
        error: `${lead}the shim's API token may not ${what} (${said(e)}); it needs the Read & Write permission: create a Read & Write token in the project (Security → API tokens) and put it in HCLOUD_TOKEN`,
      });
    case "capacity":
      return answer(503, { error: `${lead}Hetzner Cloud has no room for it now (${said(e)})` }, { "retry-after": "30" });
    case "transient":
      return answer(
        503,
        { error: `${lead}Hetzner Cloud could not ${what} right now (${said(e)}); try again later` },
        { "retry-after": "5" },
      );
    case "server":
      return answer(502, { error: `${lead}Hetzner Cloud failed on ${what} (${said(e)})` });
    case "refused":
      return answer(422, { error: `${lead}Hetzner Cloud refused ${what} (${said(e)})` });
  }
}
