/**
 * GitHub rate limits as plain data: what a response says about the credential's budget, and
 * how long everyone using the credential must wait after a refusal. No I/O, no clock: callers
 * pass `now` (unix ms) so tests drive time.
 */

export interface RateLimitSnapshot {
  limit: number | null;
  remaining: number | null;
  used: number | null;
  /** Unix ms when the primary window resets. */
  resetAt: number | null;
  resource: string | null;
}

type HeaderSource = { get(name: string): string | null };

const intHeader = (h: HeaderSource, name: string): number | null => {
  const v = h.get(name);
  if (v === null || v.trim() === "") return null;
  const n = Number(v);
  return Number.isFinite(n) ? Math.trunc(n) : null;
};

/** The `x-ratelimit-*` headers, or null when the response carries none (GHES with limits off). */
export function parseRateLimit(headers: HeaderSource): RateLimitSnapshot | null {
  const snapshot: RateLimitSnapshot = {
    limit: intHeader(headers, "x-ratelimit-limit"),
    remaining: intHeader(headers, "x-ratelimit-remaining"),
    used: intHeader(headers, "x-ratelimit-used"),
    resetAt: (() => {
      const reset = intHeader(headers, "x-ratelimit-reset");
      return reset === null ? null : reset * 1000;
    })(),
    resource: headers.get("x-ratelimit-resource"),
  };
  return snapshot.limit === null && snapshot.remaining === null && snapshot.resetAt === null ? null : snapshot;
}

/** `retry-after` in ms: delta-seconds or an HTTP date. */
export function parseRetryAfter(value: string | null, now: number): number | null {
  if (value === null || value.trim() === "") return null;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}

/**
 * Whether a refusal is GitHub's rate limiting rather than a permission problem: both come
 * as 403. 429 always is; a 403 is when it says so (retry-after, remaining 0, or the message).
 */
export function isRateLimited(status: number, headers: HeaderSource, message = ""): boolean {
  if (status === 429) return true;
  if (status !== 403) return false;
  if (headers.get("retry-after") !== null) return true;
  if (intHeader(headers, "x-ratelimit-remaining") === 0) return true;
  return /rate limit/i.test(message);
}

/**
 * Whether a rate-limit refusal is a secondary limit (points a minute, concurrent requests) rather
 * than the primary hourly one. GitHub's "Rate limits for the REST API": a secondary limit is a
 * 403 or 429 whose message says so, `retry-after` may come with it; the primary limit comes with
 * `x-ratelimit-remaining: 0` and a message of its own.
 */
export function isSecondaryLimit(status: number, headers: HeaderSource, message = ""): boolean {
  if (status !== 403 && status !== 429) return false;
  return /secondary rate limit/i.test(message) || headers.get("retry-after") !== null;
}

/** Minimum wait when GitHub gives no hint (its guidance: at least a minute). */
export const MIN_UNHINTED_WAIT_MS = 60_000;
export const MAX_UNHINTED_WAIT_MS = 30 * 60_000;
/** Added to `x-ratelimit-reset`: GitHub's clock and ours are not the same clock. */
export const RESET_SKEW_MS = 1_000;

/**
 * Until when nobody may call GitHub with this credential after a rate-limit answer.
 * `strikes` counts consecutive unhinted refusals (0 for the first), for exponential backoff.
 */
export function rateLimitedUntil(input: { now: number; headers: HeaderSource; strikes: number }): { until: number; hinted: boolean } {
  const { now, headers } = input;
  const retryAfter = parseRetryAfter(headers.get("retry-after"), now);
  if (retryAfter !== null) return { until: now + Math.max(retryAfter, 1_000), hinted: true };
  const snapshot = parseRateLimit(headers);
  if (snapshot?.remaining === 0 && snapshot.resetAt !== null && snapshot.resetAt + RESET_SKEW_MS > now) {
    return { until: snapshot.resetAt + RESET_SKEW_MS, hinted: true };
  }
  const wait = Math.min(MIN_UNHINTED_WAIT_MS * 2 ** Math.max(0, input.strikes), MAX_UNHINTED_WAIT_MS);
  return { until: now + wait, hinted: false };
}

/**
 * Spreads callers that were all waiting for the same moment over a short window, so the
 * end of a rate-limit window does not become a thundering herd. `random` is in [0, 1).
 */
export function withJitter(until: number, random: number, spreadMs = 2_000): number {
  return until + Math.floor(random * spreadMs);
}

/** Backoff before retry `attempt` (1-based) of a 5xx or network failure: 0.5 s, 1 s, 2 s, … ≤ 8 s. */
export function serverErrorBackoff(attempt: number, random = 0.5): number {
  const base = Math.min(500 * 2 ** (attempt - 1), 8_000);
  return Math.round(base * (0.75 + random * 0.5));
}

/** Whether a snapshot is worth persisting now, rather than with the next observation. */
export function isLow(snapshot: RateLimitSnapshot | null): boolean {
  if (!snapshot || snapshot.remaining === null) return false;
  const limit = snapshot.limit ?? 5000;
  return snapshot.remaining <= Math.max(10, limit * 0.05);
}
