import { describe, expect, it } from "vitest";
import {
  isLow,
  isRateLimited,
  isSecondaryLimit,
  MAX_UNHINTED_WAIT_MS,
  MIN_UNHINTED_WAIT_MS,
  parseRateLimit,
  parseRetryAfter,
  RESET_SKEW_MS,
  rateLimitedUntil,
  serverErrorBackoff,
  withJitter,
} from "../../src/github/rate-limit";

const h = (o: Record<string, string>) => new Headers(o);
const NOW = Date.UTC(2026, 10, 22, 12, 0, 0);

describe("parseRateLimit", () => {
  it("reads x-ratelimit-* (reset in seconds → ms)", () => {
    expect(
      parseRateLimit(
        h({
          "x-ratelimit-limit": "5000",
          "x-ratelimit-remaining": "4321",
          "x-ratelimit-used": "679",
          "x-ratelimit-reset": "1795400000",
          "x-ratelimit-resource": "core",
        }),
      ),
    ).toEqual({ limit: 5000, remaining: 4321, used: 679, resetAt: 1795400000_000, resource: "core" });
  });

  it("is null without headers (GHES with rate limiting off) and ignores garbage", () => {
    expect(parseRateLimit(h({}))).toBeNull();
    expect(parseRateLimit(h({ "x-ratelimit-limit": "lots" }))).toBeNull();
  });
});

describe("parseRetryAfter", () => {
  it("takes seconds or an HTTP date", () => {
    expect(parseRetryAfter("30", NOW)).toBe(30_000);
    expect(parseRetryAfter(new Date(NOW + 45_000).toUTCString(), NOW)).toBe(45_000);
    expect(parseRetryAfter(new Date(NOW - 45_000).toUTCString(), NOW)).toBe(0);
    expect(parseRetryAfter(null, NOW)).toBeNull();
    expect(parseRetryAfter("soon", NOW)).toBeNull();
  });
});

describe("isRateLimited", () => {
  it("tells rate limits from permission errors", () => {
    expect(isRateLimited(429, h({}))).toBe(true);
    expect(isRateLimited(403, h({ "retry-after": "60" }))).toBe(true);
    expect(isRateLimited(403, h({ "x-ratelimit-remaining": "0" }))).toBe(true);
    expect(isRateLimited(403, h({}), "You have exceeded a secondary rate limit")).toBe(true);
    expect(isRateLimited(403, h({ "x-ratelimit-remaining": "4000" }), "Resource not accessible by integration")).toBe(false);
    expect(isRateLimited(404, h({ "retry-after": "1" }))).toBe(false);
    expect(isRateLimited(200, h({ "x-ratelimit-remaining": "0" }))).toBe(false);
  });
});

describe("isSecondaryLimit", () => {
  it("tells GitHub's secondary limits (what the budget learns from) from the primary hourly one", () => {
    const secondary = "You have exceeded a secondary rate limit. Please wait a few minutes before you try again.";
    expect(isSecondaryLimit(403, h({}), secondary)).toBe(true);
    expect(isSecondaryLimit(429, h({ "x-ratelimit-remaining": "4000" }), secondary)).toBe(true);
    expect(isSecondaryLimit(403, h({ "retry-after": "30" }))).toBe(true);
    expect(isSecondaryLimit(429, h({ "retry-after": "30" }))).toBe(true);
    // A secondary limit may come with the primary one exhausted too: the message says which.
    expect(isSecondaryLimit(403, h({ "x-ratelimit-remaining": "0" }), secondary)).toBe(true);
    expect(isSecondaryLimit(403, h({ "x-ratelimit-remaining": "0" }), "API rate limit exceeded for installation ID 777.")).toBe(false);
    expect(isSecondaryLimit(429, h({ "x-ratelimit-remaining": "0" }))).toBe(false);
    expect(isSecondaryLimit(403, h({}), "Resource not accessible by integration")).toBe(false);
    expect(isSecondaryLimit(404, h({ "retry-after": "1" }), secondary)).toBe(false);
  });
});

describe("rateLimitedUntil", () => {
  it("prefers retry-after", () => {
    expect(
      rateLimitedUntil({
        now: NOW,
        strikes: 3,
        headers: h({ "retry-after": "30", "x-ratelimit-remaining": "0", "x-ratelimit-reset": "1" }),
      }),
    ).toEqual({ until: NOW + 30_000, hinted: true });
  });

  it("never says 'now' even for retry-after: 0", () => {
    expect(rateLimitedUntil({ now: NOW, strikes: 0, headers: h({ "retry-after": "0" }) }).until).toBe(NOW + 1_000);
  });

  it("waits until x-ratelimit-reset when nothing remains", () => {
    const reset = Math.floor(NOW / 1000) + 600;
    expect(
      rateLimitedUntil({ now: NOW, strikes: 0, headers: h({ "x-ratelimit-remaining": "0", "x-ratelimit-reset": String(reset) }) }),
    ).toEqual({ until: reset * 1000 + RESET_SKEW_MS, hinted: true });
  });

  it("otherwise waits at least a minute, doubling per strike, capped", () => {
    const waits = [0, 1, 2, 3, 10].map((strikes) => rateLimitedUntil({ now: NOW, strikes, headers: h({}) }));
    expect(waits.map((w) => w.until - NOW)).toEqual([
      MIN_UNHINTED_WAIT_MS,
      2 * MIN_UNHINTED_WAIT_MS,
      4 * MIN_UNHINTED_WAIT_MS,
      8 * MIN_UNHINTED_WAIT_MS,
      MAX_UNHINTED_WAIT_MS,
    ]);
    expect(waits.every((w) => !w.hinted)).toBe(true);
  });

  it("does not trust a reset in the past", () => {
    const past = Math.floor(NOW / 1000) - 10;
    const r = rateLimitedUntil({ now: NOW, strikes: 0, headers: h({ "x-ratelimit-remaining": "0", "x-ratelimit-reset": String(past) }) });
    expect(r).toEqual({ until: NOW + MIN_UNHINTED_WAIT_MS, hinted: false });
  });
});

describe("backoff and jitter", () => {
  it("spreads waiters over a window after the time, never before", () => {
    expect(withJitter(NOW, 0)).toBe(NOW);
    expect(withJitter(NOW, 0.999)).toBeLessThan(NOW + 2_000);
    expect(withJitter(NOW, 0.5)).toBeGreaterThan(NOW);
  });

  it("grows 5xx backoff exponentially up to a cap", () => {
    const base = [1, 2, 3, 4, 5, 6, 10].map((a) => serverErrorBackoff(a, 0.5));
    expect(base).toEqual([500, 1000, 2000, 4000, 8000, 8000, 8000]);
    expect(serverErrorBackoff(1, 0)).toBe(375);
    expect(serverErrorBackoff(1, 0.999)).toBeLessThanOrEqual(625);
  });

  it("knows when the budget is low", () => {
    expect(isLow({ limit: 5000, remaining: 200, used: 4800, resetAt: null, resource: "core" })).toBe(true);
    expect(isLow({ limit: 5000, remaining: 2000, used: 3000, resetAt: null, resource: "core" })).toBe(false);
    expect(isLow(null)).toBe(false);
  });
});
