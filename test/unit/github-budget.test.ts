import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  BUDGET_RECOVERY_MS,
  type BudgetRow,
  budgetWindow,
  DEFAULT_GITHUB_BUDGET,
  effectivePointsPerMinute,
  effectivePolicy,
  type Fairness,
  fairAllowance,
  GITHUB_SECONDARY_POINTS_PER_MINUTE,
  JIT_CONFIG_POINTS,
  type LearnedBudget,
  learnFromRefusal,
  minLearnedPointsPerMinute,
  pointsPerWindow,
  reserve,
  worstMinutePoints,
} from "../../src/github/budget/budget";
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

describe("learning GitHub's real limit from its refusals", () => {
  const minute = 60_000;
  const budget = DEFAULT_GITHUB_BUDGET; // 810 points a minute, 3 s windows

  it("cuts to three quarters of what was in force, and never below one JIT config a window", () => {
    expect(learnFromRefusal(budget, null, 1_000_000)).toEqual({ from: 810, learned: { pointsPerMinute: 607, at: 1_000_000 } });
    // A second lesson, long after the first has grown back a little: 3/4 of what was in force then.
    const first: LearnedBudget = { pointsPerMinute: 607, at: 0 };
    const inForce = effectivePointsPerMinute(810, first, minute);
    expect(inForce).toBe(607 + 20); // 810 × 25 % grows back per 10 minutes: 20.25 a minute
    expect(learnFromRefusal(budget, first, minute)).toEqual({ from: 627, learned: { pointsPerMinute: 470, at: minute } });
    // One JIT config per 3 s window is 100 points a minute: the floor.
    expect(minLearnedPointsPerMinute(3_000)).toBe(100);
    expect(learnFromRefusal(budget, { pointsPerMinute: 110, at: 0 }, 10_000)?.learned.pointsPerMinute).toBe(100);
    expect(learnFromRefusal(budget, { pointsPerMinute: 100, at: 0 }, 10_000)?.learned.pointsPerMinute).toBe(100);
    expect(pointsPerWindow({ pointsPerMinute: 100, windowMs: 3_000 })).toBe(JIT_CONFIG_POINTS);
    // Repeated refusals settle at the floor, whatever the configured figure.
    let learned: LearnedBudget | null = null;
    for (let t = 0; t < 60 * 6_000; t += 6_000) learned = learnFromRefusal(budget, learned, t)?.learned ?? learned;
    expect(learned?.pointsPerMinute).toBe(100);
  });

  it("grows back linearly to the configured figure: one cut in 10 minutes, a deeper one more slowly", () => {
    const cut: LearnedBudget = { pointsPerMinute: 607, at: 0 };
    const inForceAt = (ms: number) => effectivePointsPerMinute(810, cut, ms);
    expect(inForceAt(0)).toBe(607);
    expect(inForceAt(-5_000)).toBe(607); // a clock behind the cut's
    expect(inForceAt(5 * minute)).toBe(607 + 101);
    expect(inForceAt(BUDGET_RECOVERY_MS - minute)).toBe(607 + 182);
    // 607 is 810 × 75 % rounded down: the last half point takes a few seconds more.
    expect(inForceAt(BUDGET_RECOVERY_MS)).toBe(809);
    expect(inForceAt(BUDGET_RECOVERY_MS + 3_000)).toBe(810);
    expect(inForceAt(10 * BUDGET_RECOVERY_MS)).toBe(810);
    expect(inForceAt(Number.MAX_SAFE_INTEGER)).toBe(810);
    // Never decreasing, never above configured.
    for (let t = 0; t < 12 * minute; t += 7_001) expect(inForceAt(t + 7_001)).toBeGreaterThanOrEqual(inForceAt(t));
    // From the floor (100) the same 20.25 a minute: 35 minutes to 810, not 10.
    expect(effectivePointsPerMinute(810, { pointsPerMinute: 100, at: 0 }, BUDGET_RECOVERY_MS)).toBe(302);
    expect(effectivePointsPerMinute(810, { pointsPerMinute: 100, at: 0 }, 35 * minute)).toBe(808);
    // Nothing learned, or learned above a configured figure since lowered: the configured figure.
    expect(effectivePointsPerMinute(810, null, 0)).toBe(810);
    expect(effectivePointsPerMinute(450, { pointsPerMinute: 607, at: 0 }, 0)).toBe(450);
    expect(effectivePolicy(budget, cut, 0)).toEqual({ pointsPerMinute: 607, windowMs: 3_000 });
    expect(pointsPerWindow(effectivePolicy(budget, cut, 0))).toBe(30); // 6 JIT configs a window instead of 8
  });

  it("learns once from refusals that arrive together: a window's calls refused at once, calls already on their way", () => {
    const first = learnFromRefusal(budget, null, 100_000)!;
    // The rest of the window's calls, and calls sent in the next window before the news arrived.
    for (const later of [0, 1, 2_999, 5_999]) expect(learnFromRefusal(budget, first.learned, 100_000 + later)).toBeNull();
    // Two windows on: a new lesson.
    expect(learnFromRefusal(budget, first.learned, 106_000)?.from).toBe(607 + 2);
    // While the credential waits out a refusal (GitHub's retry-after), what still arrives is part of it.
    expect(learnFromRefusal(budget, first.learned, 130_000, 160_000)).toBeNull();
    expect(learnFromRefusal(budget, null, 130_000, 160_000)).toBeNull();
    expect(learnFromRefusal(budget, first.learned, 160_000, 160_000)).not.toBeNull();
  });

  it("reserves out of the figure in force: less after a cut, the configured figure again once it has grown back", () => {
    const row: BudgetRow = { windowStart: 0, pointsUsed: 0, learned: { pointsPerMinute: 607, at: 0 } };
    expect(reserve(row, 3_000, 20, budget, NO_FAIRNESS, 3_000).granted).toBe(6);
    expect(reserve(row, 3_000, 20, budget, NO_FAIRNESS, 3_000).row.learned).toEqual(row.learned);
    expect(reserve(row, BUDGET_RECOVERY_MS, 20, budget, NO_FAIRNESS, BUDGET_RECOVERY_MS).granted).toBe(8);
    expect(reserve(null, 3_000, 20, budget).granted).toBe(8);
    // The fair share divides the window in force.
    expect(reserve(row, 3_000, 20, budget, { othersShort: [10], mine: 0 }, 3_000).granted).toBe(3);
  });
});

const NO_FAIRNESS: Fairness = { othersShort: [], mine: 0 };

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
