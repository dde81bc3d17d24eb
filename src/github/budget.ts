/**
 * A per-credential budget of GitHub's secondary-limit points, as plain arithmetic. GitHub lets
 * one credential spend 900 points in a minute (a mutation such as generate-jitconfig costs 5);
 * past that it answers 403. The coordinator spends less than that (`GITHUB_POINTS_PER_MINUTE`,
 * 810 by default, leaving room for reads and deletes that are not budgeted) in short fixed
 * windows aligned on the clock, so every isolate and every scale set object agrees on which
 * window it is in. No I/O, no clock: callers pass `now` (unix ms).
 *
 * Why short windows: GitHub's minute may slide. Two full one-minute windows back to back would
 * let 2 × 810 points through in a few seconds around the boundary. A 60 s span touches at most
 * ⌈60 / w⌉ + 1 windows of w seconds, so with 3 s windows of 40 points the worst minute is
 * 21 × 40 = 840 points, under 900 (`worstMinutePoints`).
 *
 * Why 3 s and not 6 (the same 8 JIT configs per 3 s as 16 per 6 s: 160 a minute): calls reach
 * GitHub some time after the budget let them go, and a window's calls that arrive late count in
 * GitHub's minute with the next window's. With 6 s windows one late window's calls took a minute
 * to 12 × 16 = 192 JIT configs (960 points, refused); with 3 s windows a minute holds at most
 * 22 × 8 = 176 (880) even when one window's calls arrive up to a whole window late. Measured: a
 * stall that delivered one 6 s window's calls ~2 s late provoked 4 refusals in the 1,000-job burst.
 */

export interface GithubBudgetPolicy {
  /** Points the coordinator may spend per credential per minute. */
  pointsPerMinute: number;
  /** Length of one budget window (ms). */
  windowMs: number;
}

/** What generate-jitconfig costs (a POST: a mutation). */
export const JIT_CONFIG_POINTS = 5;

/** GitHub's own limit, for the arithmetic below. */
export const GITHUB_SECONDARY_POINTS_PER_MINUTE = 900;

export const DEFAULT_GITHUB_BUDGET: GithubBudgetPolicy = { pointsPerMinute: 810, windowMs: 3_000 };

/** The points one window may spend: the minute's share, and never less than one JIT config (or nothing would ever be created). */
export function pointsPerWindow(policy: GithubBudgetPolicy): number {
  return Math.max(JIT_CONFIG_POINTS, Math.floor((policy.pointsPerMinute * policy.windowMs) / 60_000));
}

/** The budget window `now` falls in: [start, end). */
export function budgetWindow(now: number, windowMs: number): { start: number; end: number } {
  const start = Math.floor(now / windowMs) * windowMs;
  return { start, end: start + windowMs };
}

/**
 * The most points the budget lets through in any 60 s span, whatever the span's alignment; with
 * `lateWindows`, when calls may reach GitHub up to that many windows after their own.
 */
export function worstMinutePoints(policy: GithubBudgetPolicy, lateWindows = 0): number {
  return (Math.ceil(60_000 / policy.windowMs) + 1 + lateWindows) * pointsPerWindow(policy);
}

export interface BudgetRow {
  windowStart: number;
  pointsUsed: number;
}

/**
 * The fair share rule between scale sets on one credential. Without it, the scale set whose object
 * wakes first in each window (a burst's wakes exactly when the window opens) takes the whole
 * window, window after window, and another scale set on the credential gets nothing until the
 * burst is over. So a reservation knows which other scale sets asked recently (in this window or
 * the one before) and fell short, and how many each still lacked (`othersShort`):
 *
 * - each asker's fair share is the window's JIT configs divided by the askers (itself included),
 *   at least one;
 * - each other asker is kept what it lacks, up to its share; the rest is this one's to take, and
 *   never less than its own share (a scale set lacking little leaves the remainder to the burst);
 * - what this scale set already got in this window (`mine`) counts against that.
 *
 * Nobody else short: no cap at all, so a lone burst still gets the whole window. Someone short:
 * it waits at most until the next window, where the burst leaves it its share. Pure: the SQL in
 * src/db/github-budget-store.ts computes the same in the reservation's own statement.
 */
export interface Fairness {
  /** For each other scale set on the credential whose last ask (this window or the one before) fell short: by how many. */
  othersShort: readonly number[];
  /** JIT configs this scale set was already granted in this window. */
  mine: number;
}

export const NO_RIVALS: Fairness = { othersShort: [], mine: 0 };

/** The most JIT configs a scale set may still take in this window under the fair share rule. */
export function fairAllowance(perWindowJit: number, fairness: Fairness): number {
  const { othersShort, mine } = fairness;
  if (!othersShort.length) return perWindowJit;
  const share = Math.max(1, Math.floor(perWindowJit / (othersShort.length + 1)));
  const keptForOthers = othersShort.reduce((sum, short) => sum + Math.min(short, share), 0);
  return Math.max(0, Math.max(share, perWindowJit - keptForOthers) - mine);
}

/**
 * One reservation of `wanted` JIT configs in window `windowStart`: how many are granted and the
 * row after it. A row from an earlier window is spent afresh; a caller whose clock is behind a
 * window another isolate already opened gets nothing (it tries again in the next). `fairness`
 * cuts the grant to the scale set's fair share when others on the credential are short
 * (fairAllowance). The SQL in src/db/github-budget-store.ts does the same in one statement.
 */
export function reserve(
  row: BudgetRow | null,
  windowStart: number,
  wanted: number,
  policy: GithubBudgetPolicy,
  fairness: Fairness = NO_RIVALS,
): { granted: number; row: BudgetRow } {
  const perWindow = pointsPerWindow(policy);
  if (row && row.windowStart > windowStart) return { granted: 0, row };
  const used = row && row.windowStart === windowStart ? row.pointsUsed : 0;
  const allowance = fairAllowance(Math.floor(perWindow / JIT_CONFIG_POINTS), fairness);
  const granted = Math.max(0, Math.min(wanted, allowance, Math.floor((perWindow - used) / JIT_CONFIG_POINTS)));
  return { granted, row: { windowStart, pointsUsed: used + granted * JIT_CONFIG_POINTS } };
}
