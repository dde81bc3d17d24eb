import { describe, expect, it } from "vitest";
import { countD1, countFetch, largest, measure, noCost, withinBudget } from "../../src/lib/invocation-cost";
import { outboundLimiter } from "../../src/lib/outbound-limit";

const tick = () => new Promise((r) => setTimeout(r, 0));

describe("invocation cost", () => {
  it("counts fetches and D1 calls into the scope they were made in, across awaits, and into every enclosing scope", async () => {
    const invocation = noCost();
    const pass = noCost();
    await measure(invocation, async () => {
      countFetch();
      await tick();
      await measure(pass, async () => {
        await tick();
        countD1(5);
        countFetch();
      });
      countD1(1);
    });
    expect(pass).toEqual({ subrequests: 2, fetches: 1, d1RoundTrips: 1, d1Queries: 5 });
    expect(invocation).toEqual({ subrequests: 4, fetches: 2, d1RoundTrips: 2, d1Queries: 6 });
  });

  it("keeps concurrent invocations apart, and counts nothing outside a scope", async () => {
    const a = noCost();
    const b = noCost();
    countFetch();
    await Promise.all([
      measure(a, async () => {
        await tick();
        countFetch();
      }),
      measure(b, async () => {
        countFetch();
        await tick();
        countFetch();
      }),
    ]);
    expect([a.fetches, b.fetches]).toEqual([1, 2]);
  });

  it("counts a call made through a shared client in the invocation that awaited it (the limiter's queue included)", async () => {
    // One limiter for two invocations, one slot: the second call waits in the queue, started by the first's release.
    const lim = outboundLimiter(1, (async () => {
      countFetch();
      await tick();
      return new Response("ok");
    }) as typeof fetch);
    const a = noCost();
    const b = noCost();
    await Promise.all([measure(a, () => lim.fetch("https://x.test/a")), measure(b, () => lim.fetch("https://x.test/b"))]);
    expect([a.fetches, b.fetches]).toEqual([1, 1]);
  });

  it("judges a cost against the paid plan's budgets, and keeps the largest field by field", () => {
    const cost = { subrequests: 10_000, fetches: 9_000, d1RoundTrips: 1_000, d1Queries: 1_000 };
    expect(withinBudget(cost)).toBe(true);
    expect(withinBudget({ ...cost, subrequests: 10_001 })).toBe(false);
    expect(withinBudget({ ...cost, d1Queries: 1_001 })).toBe(false);
    expect(withinBudget(cost, 30_001)).toBe(false);
    expect(largest(largest(null, { ...noCost(), fetches: 3 }), { ...noCost(), d1Queries: 7 })).toEqual({
      subrequests: 0,
      fetches: 3,
      d1RoundTrips: 0,
      d1Queries: 7,
    });
  });
});
