import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  type BudgetRow,
  budgetWindow,
  DEFAULT_GITHUB_BUDGET,
  type Fairness,
  fairAllowance,
  GITHUB_SECONDARY_POINTS_PER_MINUTE,
  JIT_CONFIG_POINTS,
  pointsPerWindow,
  reserve,
  worstMinutePoints,
} from "../../src/github/budget";
import { capCreates, createCount } from "../../src/scaleset/jit/budget-cap";
import type { Plan, PlanSummary } from "../../src/scaleset/reconcile";
import { scaleSetSettings } from "../../src/scaleset/settings";

const policy = { pointsPerMinute: 600, windowMs: 10_000 }; // 100 points a window: 20 JIT configs

describe("GitHub budget arithmetic", () => {
  it("spends the minute's points in clock-aligned windows, at least one JIT config each", () => {
    expect(pointsPerWindow(policy)).toBe(100);
    expect(pointsPerWindow(DEFAULT_GITHUB_BUDGET)).toBe(40);
    expect(pointsPerWindow({ pointsPerMinute: 1, windowMs: 6_000 })).toBe(JIT_CONFIG_POINTS);
    expect(budgetWindow(123_456, 10_000)).toEqual({ start: 120_000, end: 130_000 });
    expect(budgetWindow(130_000, 10_000)).toEqual({ start: 130_000, end: 140_000 });
  });

  it("keeps the default under GitHub's 900 points in any 60 s, however the minute is aligned", () => {
    expect(worstMinutePoints(DEFAULT_GITHUB_BUDGET)).toBe(840);
    expect(worstMinutePoints(DEFAULT_GITHUB_BUDGET)).toBeLessThanOrEqual(GITHUB_SECONDARY_POINTS_PER_MINUTE);
    // Calls arriving up to a window late still fit (22 × 40 = 880); 6 s windows did not (12 × 81 = 972).
    expect(worstMinutePoints(DEFAULT_GITHUB_BUDGET, 1)).toBeLessThanOrEqual(GITHUB_SECONDARY_POINTS_PER_MINUTE);
    expect(worstMinutePoints({ pointsPerMinute: 810, windowMs: 6_000 }, 1)).toBe(972);
    // One-minute windows would not: 2 × 810 around a boundary.
    expect(worstMinutePoints({ pointsPerMinute: 810, windowMs: 60_000 })).toBe(1620);
  });

  it("grants what the window has left, then nothing until the next window", () => {
    const first = reserve(null, 0, 15, policy);
    expect(first).toEqual({ granted: 15, row: { windowStart: 0, pointsUsed: 75 } });
    const second = reserve(first.row, 0, 15, policy);
    expect(second).toEqual({ granted: 5, row: { windowStart: 0, pointsUsed: 100 } });
    expect(reserve(second.row, 0, 1, policy).granted).toBe(0);
    expect(reserve(second.row, 10_000, 30, policy)).toEqual({ granted: 20, row: { windowStart: 10_000, pointsUsed: 100 } });
  });

  it("gives nothing to a caller whose clock is behind a window another isolate opened", () => {
    expect(reserve({ windowStart: 20_000, pointsUsed: 0 }, 10_000, 5, policy)).toEqual({
      granted: 0,
      row: { windowStart: 20_000, pointsUsed: 0 },
    });
  });

  it("never spends more than a window's points, whoever asks how much", () => {
    fc.assert(
      fc.property(fc.array(fc.record({ window: fc.integer({ min: 0, max: 3 }), wanted: fc.integer({ min: 0, max: 40 }) })), (asks) => {
        let row: BudgetRow | null = null;
        const spent = new Map<number, number>();
        for (const ask of asks.sort((a, b) => a.window - b.window)) {
          const r = reserve(row, ask.window * policy.windowMs, ask.wanted, policy);
          expect(r.granted).toBeLessThanOrEqual(ask.wanted);
          row = r.row;
          spent.set(ask.window, (spent.get(ask.window) ?? 0) + r.granted * JIT_CONFIG_POINTS);
        }
        for (const points of spent.values()) expect(points).toBeLessThanOrEqual(pointsPerWindow(policy));
      }),
    );
  });

  it("is 810 points a minute in 3 s windows by default; GITHUB_POINTS_PER_MINUTE=0 turns it off", () => {
    expect(scaleSetSettings({}).githubBudget).toEqual({ pointsPerMinute: 810, windowMs: 3_000 });
    expect(scaleSetSettings({ GITHUB_POINTS_PER_MINUTE: "450", GITHUB_BUDGET_WINDOW_SECONDS: "2" }).githubBudget).toEqual({
      pointsPerMinute: 450,
      windowMs: 2_000,
    });
    expect(scaleSetSettings({ GITHUB_POINTS_PER_MINUTE: "0" }).githubBudget).toBeNull();
    for (const bad of ["", "-5", "lots"])
      expect(scaleSetSettings({ GITHUB_POINTS_PER_MINUTE: bad }).githubBudget?.pointsPerMinute).toBe(810);
    expect(scaleSetSettings({ GITHUB_BUDGET_WINDOW_SECONDS: "0" }).githubBudget?.windowMs).toBe(3_000);
  });
});

const summary = (over: Partial<PlanSummary> = {}): PlanSummary => ({
  desired: 50,
  live: 0,
  available: 0,
  idle: 0,
  busy: 0,
  creating: 0,
  deleting: 0,
  queued: 50,
  blocked: null,
  ...over,
});

/**
 * Scale sets asking one credential's budget, window after window, with their asks remembered as
 * the D1 table github_budget_demand remembers them (each scale set's last ask).
 */
function credential() {
  let row: BudgetRow | null = null;
  const asks = new Map<string, { windowStart: number; wanted: number; granted: number; grantedInWindow: number }>();
  const fairnessFor = (scaleSet: string, windowStart: number): Fairness => {
    const othersShort = [...asks]
      .filter(([id, a]) => id !== scaleSet && a.windowStart >= windowStart - policy.windowMs && a.wanted > a.granted)
      .map(([, a]) => a.wanted - a.granted);
    const mine = asks.get(scaleSet);
    return { othersShort, mine: mine?.windowStart === windowStart ? mine.grantedInWindow : 0 };
  };
  return {
    ask(scaleSet: string, window: number, wanted: number): number {
      const windowStart = window * policy.windowMs;
      const r = reserve(row, windowStart, wanted, policy, fairnessFor(scaleSet, windowStart));
      row = r.row;
      const before = asks.get(scaleSet);
      const inWindow = before?.windowStart === windowStart ? before.grantedInWindow : 0;
      asks.set(scaleSet, { windowStart, wanted, granted: r.granted, grantedInWindow: inWindow + r.granted });
      return r.granted;
    },
  };
}

describe("the fair share between scale sets on one credential", () => {
  it("leaves a lone asker uncapped, and keeps for others what they lack, up to their share", () => {
    expect(fairAllowance(20, { othersShort: [], mine: 0 })).toBe(20);
    // One other lacking 5 of its share of 10: this one may take 15.
    expect(fairAllowance(20, { othersShort: [5], mine: 0 })).toBe(15);
    // One other lacking 50: it is kept its share, 10.
    expect(fairAllowance(20, { othersShort: [50], mine: 0 })).toBe(10);
    expect(fairAllowance(20, { othersShort: [50], mine: 7 })).toBe(3);
    expect(fairAllowance(20, { othersShort: [50], mine: 12 })).toBe(0);
    // Three others short: shares of 5; one lacking 1 leaves the rest of its share to the others.
    expect(fairAllowance(20, { othersShort: [1, 30, 30], mine: 0 })).toBe(9);
    // More askers than JIT configs: each may still take one.
    expect(fairAllowance(2, { othersShort: [9, 9, 9], mine: 0 })).toBe(1);
  });

  it("serves a small scale set in the window after it asked, however large another's burst (it starved for the whole burst without)", () => {
    const fair = credential();
    // The burst's object wakes first in every window and asks for all it still lacks.
    let burstLeft = 200;
    const small: number[] = [];
    for (let window = 0; window < 4; window++) {
      burstLeft -= fair.ask("burst", window, burstLeft);
      small.push(fair.ask("small", window, 5 - small.reduce((a, b) => a + b, 0)));
    }
    // Window 0: the burst was alone when it asked and took all 20. Window 1: the small one's 5 were kept for it.
    expect(small).toEqual([0, 5, 0, 0]);
    expect(burstLeft).toBe(200 - 20 - 15 - 20 - 20);

    // Without the rule (every ask uncapped), the same order starves it.
    let row: BudgetRow | null = null;
    let left = 200;
    const starved: number[] = [];
    for (let window = 0; window < 4; window++) {
      const b = reserve(row, window * policy.windowMs, left, policy);
      left -= b.granted;
      const s = reserve(b.row, window * policy.windowMs, 5, policy);
      row = s.row;
      starved.push(s.granted);
    }
    expect(starved).toEqual([0, 0, 0, 0]);
  });

  it("splits the window evenly between two bursts, and never spends more than the window has", () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ who: fc.constantFrom("a", "b", "c"), wanted: fc.integer({ min: 0, max: 60 }) }), { maxLength: 30 }),
        (asks) => {
          const fair = credential();
          let spent = 0;
          for (const ask of asks) {
            const granted = fair.ask(ask.who, 0, ask.wanted);
            expect(granted).toBeLessThanOrEqual(ask.wanted);
            spent += granted;
          }
          expect(spent).toBeLessThanOrEqual(20);
        },
      ),
    );
    const fair = credential();
    fair.ask("a", 0, 100);
    fair.ask("b", 0, 100);
    expect([fair.ask("a", 1, 80), fair.ask("b", 1, 100)]).toEqual([10, 10]);
  });
});

describe("capCreates", () => {
  const planned: Plan = {
    actions: [
      { type: "mark_delete", instance: "a", reason: "job_completed" },
      { type: "create", count: 50 },
      { type: "delete", instance: "b", force: false },
    ],
    summary: summary(),
    wakeAt: 90_000,
  };

  it("cuts the creates to what was granted, keeps every other action, says why and wakes when the budget frees", () => {
    const capped = capCreates(planned, 10, 60_000);
    expect(createCount(capped.actions)).toBe(10);
    expect(capped.actions.filter((a) => a.type !== "create")).toEqual(planned.actions.filter((a) => a.type !== "create"));
    expect(capped.summary.blocked).toBe("github_budget");
    expect(capped.wakeAt).toBe(60_000);
    expect(capCreates({ ...planned, wakeAt: null }, 10, 60_000).wakeAt).toBe(60_000);
    expect(capCreates(planned, 10, 120_000).wakeAt).toBe(90_000);
  });

  it("drops the create action when nothing was granted", () => {
    const capped = capCreates(planned, 0, 60_000);
    expect(capped.actions.some((a) => a.type === "create")).toBe(false);
    expect(capped.actions).toHaveLength(2);
  });

  it("leaves a plan the budget pays for in full as it is", () => {
    expect(capCreates(planned, 50, 60_000)).toBe(planned);
    const none: Plan = { actions: [], summary: summary({ blocked: "max_runners" }), wakeAt: null };
    expect(capCreates(none, 0, 60_000)).toBe(none);
  });
});
