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
 * ⌈60 / w⌉ + 1 windows of w seconds, so with 6 s windows of 81 points the worst minute is
 * 11 × 81 = 891 points, under 900 (`worstMinutePoints`).
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

export const DEFAULT_GITHUB_BUDGET: GithubBudgetPolicy = { pointsPerMinute: 810, windowMs: 6_000 };

/** The points one window may spend: the minute's share, and never less than one JIT config (or nothing would ever be created). */
export function pointsPerWindow(policy: GithubBudgetPolicy): number {
  return Math.max(JIT_CONFIG_POINTS, Math.floor((policy.pointsPerMinute * policy.windowMs) / 60_000));
}

/** The budget window `now` falls in: [start, end). */
export function budgetWindow(now: number, windowMs: number): { start: number; end: number } {
  const start = Math.floor(now / windowMs) * windowMs;
  return { start, end: start + windowMs };
}

/** The most points the budget lets through in any 60 s span, whatever the span's alignment. */
export function worstMinutePoints(policy: GithubBudgetPolicy): number {
  return (Math.ceil(60_000 / policy.windowMs) + 1) * pointsPerWindow(policy);
}

export interface BudgetRow {
  windowStart: number;
  pointsUsed: number;
}

/**
 * One reservation of `wanted` JIT configs in window `windowStart`: how many are granted and the
 * row after it. A row from an earlier window is spent afresh; a caller whose clock is behind a
 * window another isolate already opened gets nothing (it tries again in the next). The SQL in
 * src/db/github-budget-store.ts does the same in one statement.
 */
export function reserve(
  row: BudgetRow | null,
  windowStart: number,
  wanted: number,
  policy: GithubBudgetPolicy,
): { granted: number; row: BudgetRow } {
  const perWindow = pointsPerWindow(policy);
  if (row && row.windowStart > windowStart) return { granted: 0, row };
  const used = row && row.windowStart === windowStart ? row.pointsUsed : 0;
  const granted = Math.max(0, Math.min(wanted, Math.floor((perWindow - used) / JIT_CONFIG_POINTS)));
  return { granted, row: { windowStart, pointsUsed: used + granted * JIT_CONFIG_POINTS } };
}
