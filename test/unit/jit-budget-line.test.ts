import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import {
  JitBudgetLine,
  type JitBudgetLineOptions,
  type LineGrant,
  type LineReservation,
  type LineResult,
} from "../../src/scaleset/jit/jit-budget-line";

const WINDOW = 6_000;

/** A budget of `perWindow` JIT configs per window, as D1's reservation grants them; every ask recorded. */
function budget(perWindow: number) {
  const used = new Map<number, number>();
  const asks: LineReservation[] = [];
  const reserve = async (r: LineReservation) => {
    asks.push(r);
    await new Promise((resolve) => setTimeout(resolve, 20)); // a D1 round trip
    const granted = Math.min(r.wanted, perWindow - (used.get(r.windowStart) ?? 0));
    used.set(r.windowStart, (used.get(r.windowStart) ?? 0) + granted);
    return [{ credentialId: "c1", count: granted }];
  };
  return { reserve, asks };
}

type Claim = { id: number };
/** Claims in this set are lost (taken over): the next keep withdraws their waiters. */
const lostClaims = new Set<number>();
const keeps: number[][] = [];

function line(reserve: JitBudgetLineOptions<Claim>["reserve"], extra: Partial<JitBudgetLineOptions<Claim>> = {}) {
  return new JitBudgetLine<Claim>({
    windowMs: WINDOW,
    reserve,
    keepClaims: async (claims) => {
      keeps.push(claims.map((c) => c.id));
      return claims.filter((c) => !lostClaims.has(c.id));
    },
    keepEveryMs: 10_000,
    clock: { now: () => Date.now(), sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)), random: () => 0.5 },
    spreadMs: 1_000,
    checkMs: 10,
    tailMs: 0,
    stepTimeoutMs: 15_000,
    ...extra,
  });
}

let nextClaim = 0;
const claim = (): Claim => ({ id: nextClaim++ });

describe("the line for the GitHub budget (on-boot mints)", () => {
  beforeEach(() => {
    lostClaims.clear();
    keeps.length = 0;
    nextClaim = 0;
    vi.useFakeTimers();
    vi.setSystemTime(60_000); // a window's start
  });
  afterEach(() => vi.useRealTimers());

  it("asks D1 once per window for the whole line and grants the longest waiting first", async () => {
    const b = budget(16);
    const l = line(b.reserve);
    const results = Array.from({ length: 40 }, () => l.take(Date.now() + 60_000, claim()));
    await vi.advanceTimersByTimeAsync(3 * WINDOW);
    const got = await Promise.all(results);
    expect(got.map((r) => (r as { windowEnd: number; credentialId: string }).windowEnd)).toEqual([
      ...Array(16).fill(66_000),
      ...Array(16).fill(72_000),
      ...Array(8).fill(78_000),
    ]);
    // One reservation per window, for everyone then in line; the first counts every new waiter.
    expect(b.asks).toEqual([
      { windowStart: 60_000, wanted: 40, firstAsks: 40 },
      { windowStart: 66_000, wanted: 24, firstAsks: 0 },
      { windowStart: 72_000, wanted: 8, firstAsks: 0 },
    ]);
    expect(l.waiting).toBe(0);
  });

  it("lets waiters far back sleep through a reservation that cannot serve them instead of looking every few ms", async () => {
    let sleeps = 0;
    const used = new Map<number, number>();
    const slowReserve = async (r: LineReservation) => {
      await new Promise((resolve) => setTimeout(resolve, 500)); // a slow D1
      const granted = Math.min(r.wanted, 10 - (used.get(r.windowStart) ?? 0));
      used.set(r.windowStart, (used.get(r.windowStart) ?? 0) + granted);
      return [{ credentialId: "c1", count: granted }];
    };
    const l = line(slowReserve, {
      clock: {
        now: () => Date.now(),
        sleep: (ms) => {
          sleeps++;
          return new Promise((resolve) => setTimeout(resolve, ms));
        },
        random: () => 0.5,
      },
    });
    const results = Array.from({ length: 100 }, () => l.take(Date.now() + 120_000, claim()));
    await vi.advanceTimersByTimeAsync(11 * WINDOW);
    const got = await Promise.all(results);
    expect(got.map((r) => (r as { windowEnd: number; credentialId: string }).windowEnd)).toEqual(
      Array.from({ length: 100 }, (_, i) => 60_000 + WINDOW * (1 + Math.floor(i / 10))),
    );
    // Each waiter looking every 10 ms through every 500 ms reservation made ~27,000 sleeps; once
    // the line knows what a window grants, only the twenty at its front look.
    expect(sleeps).toBeLessThan(16_000);
  });

  it("serves a machine that joins while a reservation is out in the same window when it has room", async () => {
    const b = budget(16);
    const l = line(b.reserve);
    const first = l.take(Date.now() + 60_000, claim());
    await vi.advanceTimersByTimeAsync(5);
    const second = l.take(Date.now() + 60_000, claim());
    await vi.advanceTimersByTimeAsync(100);
    expect(await first).toEqual({ windowEnd: 66_000, credentialId: "c1" });
    expect(await second).toEqual({ windowEnd: 66_000, credentialId: "c1" });
    expect(b.asks.map((a) => a.wanted)).toEqual([1, 1]);
  });

  it("sends a machine whose wait would outlast its deadline away with when to come back, and keeps its place for nobody", async () => {
    const b = budget(1);
    const l = line(b.reserve);
    const served = l.take(Date.now() + 60_000, claim());
    const impatient = l.take(Date.now() + 2_000, claim());
    const patient = l.take(Date.now() + 60_000, claim());
    await vi.advanceTimersByTimeAsync(100);
    expect(await served).toEqual({ windowEnd: 66_000, credentialId: "c1" });
    expect(await impatient).toEqual({ retryAfterSeconds: 7 });
    await vi.advanceTimersByTimeAsync(WINDOW + 1_000);
    expect(await patient).toEqual({ windowEnd: 72_000, credentialId: "c1" });
    expect(b.asks.map((a) => a.wanted)).toEqual([3, 1]);
  });

  it("keeps every waiter's claim in one batch per turn, and withdraws a machine whose claim was lost", async () => {
    const b = budget(0);
    const l = line(b.reserve);
    const waiting = [l.take(Date.now() + 60_000, claim()), l.take(Date.now() + 60_000, claim()), l.take(Date.now() + 60_000, claim())];
    await vi.advanceTimersByTimeAsync(5_000);
    lostClaims.add(1);
    await vi.advanceTimersByTimeAsync(6_000);
    expect(await waiting[1]).toBe("withdrawn");
    expect(keeps).toEqual([[0, 1, 2]]);
    expect(l.waiting).toBe(2);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(keeps).toEqual([
      [0, 1, 2],
      [0, 2],
    ]);
  });

  it("tries again after a failed reservation, and says so", async () => {
    const errors: unknown[] = [];
    let fail = true;
    const b = budget(16);
    const l = line(
      async (r: LineReservation) => {
        if (fail) {
          fail = false;
          throw new Error("D1 is overloaded");
        }
        return b.reserve(r);
      },
      { onError: (err: unknown) => errors.push(err) },
    );
    const got = l.take(Date.now() + 60_000, claim());
    await vi.advanceTimersByTimeAsync(2_000);
    expect(await got).toEqual({ windowEnd: 66_000, credentialId: "c1" });
    expect(errors).toHaveLength(1);
  });

  it("replaces a reservation whose request was cut off (it never answers)", async () => {
    const b = budget(16);
    let first = true;
    const l = line((r: LineReservation) => {
      if (first) {
        first = false;
        return new Promise<LineGrant[]>(() => {});
      }
      return b.reserve(r);
    });
    const results: Promise<LineResult>[] = [l.take(Date.now() + 60_000, claim()), l.take(Date.now() + 60_000, claim())];
    await vi.advanceTimersByTimeAsync(20_000);
    expect(await Promise.all(results)).toEqual([
      { windowEnd: 78_000, credentialId: "c1" },
      { windowEnd: 78_000, credentialId: "c1" },
    ]);
  });

  it("makes no reservation in a window's last stretch, where a grant could not be used: it waits for the next window", async () => {
    const b = budget(16);
    const l = line(b.reserve, { tailMs: 1_000 });
    vi.setSystemTime(65_500);
    const late = l.take(Date.now() + 60_000, claim());
    await vi.advanceTimersByTimeAsync(400);
    expect(b.asks).toEqual([]);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(await late).toEqual({ windowEnd: 72_000, credentialId: "c1" });
    expect(b.asks.map((a) => a.windowStart)).toEqual([66_000]);
  });

  it("tells once per short reservation how many waited", async () => {
    const shorts: unknown[] = [];
    const b = budget(2);
    const l = line(b.reserve, { onShort: (s: unknown) => shorts.push(s) });
    const all = Array.from({ length: 5 }, () => l.take(Date.now() + 60_000, claim()));
    await vi.advanceTimersByTimeAsync(3 * WINDOW);
    await Promise.all(all);
    expect(shorts).toEqual([
      { windowStart: 60_000, wanted: 5, granted: 2 },
      { windowStart: 66_000, wanted: 3, granted: 2 },
    ]);
  });

  it("hands a pool's grants out in the order given, each waiter told which credential pays for it", async () => {
    const asked: number[] = [];
    const l = line(async (r: LineReservation) => {
      asked.push(r.wanted);
      return [
        { credentialId: "app-1", count: 2 },
        { credentialId: "app-2", count: 1 },
        { credentialId: "app-3", count: 0 },
      ];
    });
    const all = Array.from({ length: 4 }, () => l.take(Date.now() + 60_000, claim()));
    await vi.advanceTimersByTimeAsync(WINDOW + 2_000);
    const results = await Promise.all(all);
    expect(results.slice(0, 3)).toEqual([
      { windowEnd: 66_000, credentialId: "app-1" },
      { windowEnd: 66_000, credentialId: "app-1" },
      { windowEnd: 66_000, credentialId: "app-2" },
    ]);
    // The fourth waited for the next window, where the pool granted again.
    expect(results[3]).toEqual({ windowEnd: 72_000, credentialId: "app-1" });
    expect(asked).toEqual([4, 1]);
  });
});
