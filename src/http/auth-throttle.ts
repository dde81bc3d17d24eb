import type { Env } from "../env";
import { logEvent } from "../observability/log";
import { ApiError } from "./errors";

/**
 * Throttling of credential guessing, per client address, with Cloudflare's Rate Limiting
 * binding (wrangler.toml `[[ratelimits]]`) so the count holds across isolates of a location.
 *
 * The binding only answers "is this key still under its limit?" and counts the call. A limiter
 * that counts failures but still checks the credential of a throttled client would tell a
 * guesser when a guess is right (200 instead of 429), so a throttled client's attempts are
 * refused before any credential is looked at:
 * - the dashboard login counts every attempt (logins are rare), so the binding's answer comes
 *   first and the token is compared only when it allows;
 * - the admin API counts only wrong bearer tokens (a busy, correct client is never slowed), and
 *   an isolate that sees a client go over the limit remembers it until the window ends, refusing
 *   its requests before comparing tokens. Another isolate learns it at that client's next wrong
 *   token, so a guesser gets at most one extra comparison per isolate per window.
 */

/** The window of both limiters (`simple.period` in wrangler.toml); the binding reports no reset time. */
export const THROTTLE_PERIOD_SECONDS = 60;

/**
 * Who is counted: Cloudflare's `cf-connecting-ip` (set by Cloudflare's edge and by wrangler dev,
 * never taken from the client). An IPv6 client usually holds a whole /64, so that is the unit.
 * Null when the header is absent: only requests that did not come through the edge (in-process
 * calls such as the dashboard's to the API, and tests), which are not throttled.
 */
export function clientKey(header: string | undefined | null): string | null {
  const ip = header?.trim().toLowerCase();
  if (!ip) return null;
  if (!ip.includes(":") || ip.includes(".")) return ip;
  const halves = ip.split("::");
  if (halves.length > 2) return ip;
  const left = halves[0] ? halves[0].split(":") : [];
  const right = halves.length === 2 && halves[1] ? halves[1].split(":") : [];
  const groups = halves.length === 2 ? [...left, ...Array<string>(Math.max(0, 8 - left.length - right.length)).fill("0"), ...right] : left;
  if (groups.length !== 8 || !groups.every((g) => /^[0-9a-f]{1,4}$/.test(g))) return ip;
  return `${groups
    .slice(0, 4)
    .map((g) => parseInt(g, 16).toString(16))
    .join(":")}::/64`;
}

const tooManyAttempts = (retryAfterSeconds: number) =>
  new ApiError(
    429,
    "too many failed attempts from this address; try again later",
    { retry_after_seconds: retryAfterSeconds },
    {
      headers: { "retry-after": String(retryAfterSeconds) },
    },
  );

// ---- dashboard login -----------------------------------------------------------------------

/** Counts a login attempt; a refusal (429) when this client has used up its attempts. */
export async function countLoginAttempt(env: Env, client: string): Promise<ApiError | null> {
  const { success } = await env.LOGIN_LIMITER.limit({ key: client });
  if (success) return null;
  logEvent({ event: "auth_throttled", surface: "ui_login", client });
  return tooManyAttempts(THROTTLE_PERIOD_SECONDS);
}

// ---- admin API -----------------------------------------------------------------------------

/** Clients this isolate knows to be over the limit, with when that ends (ms). */
const throttledUntil = new Map<string, number>();
/** Bounds the memory a flood of addresses can take; the oldest marks go first. */
const MAX_MARKS = 10_000;

/** A refusal when this isolate knows the client is over its limit: checked before the token. */
export function adminThrottled(client: string, now = Date.now()): ApiError | null {
  const until = throttledUntil.get(client);
  if (until === undefined) return null;
  if (until <= now) {
    throttledUntil.delete(client);
    return null;
  }
  return tooManyAttempts(Math.ceil((until - now) / 1000));
}

/** Counts a wrong admin token; a refusal (429) when this one took the client over the limit. */
export async function countAdminFailure(env: Env, client: string, now = Date.now()): Promise<ApiError | null> {
  const { success } = await env.ADMIN_AUTH_LIMITER.limit({ key: client });
  if (success) return null;
  if (throttledUntil.size >= MAX_MARKS) throttledUntil.delete(throttledUntil.keys().next().value!);
  throttledUntil.set(client, now + THROTTLE_PERIOD_SECONDS * 1000);
  logEvent({ event: "auth_throttled", surface: "admin_api", client });
  return tooManyAttempts(THROTTLE_PERIOD_SECONDS);
}
