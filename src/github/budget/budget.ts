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

/**
 * What GitHub's own refusals taught about one credential (github_budget.learned_points_per_minute
 * and learned_at): the points a minute it was cut to, and when. Null: never refused, or nothing
 * to remember.
 */
export interface LearnedBudget {
  pointsPerMinute: number;
  at: number;
}

/**
 * Learning the real limit. GitHub does not publish every cost (content-creating requests may be
 * held to fewer than 900 points' worth, other tools may spend on the same App), so a configured
 * figure can be wrong. When GitHub refuses a call with a secondary limit anyway, the credential's
 * budget is cut to LEARN_CUT_PERCENT of what was in force, never below one JIT config a window,
 * and grows back linearly by (100 − LEARN_CUT_PERCENT) % of the configured figure every
 * BUDGET_RECOVERY_MS: one cut is forgotten in 10 minutes, two in close to 20. The increase is the
 * same whatever the depth of the cut, so a credential cut again and again (a configured figure
 * far above GitHub's) climbs back slowly from lower each time and stays under the real limit for
 * several minutes after each cut, where a fixed time to full recovery would climb faster the
 * deeper it had been cut. Why 10 minutes: GitHub counts points over a minute, so after a cut the
 * budget stays within a few per cent a minute of the level GitHub refused for about the length of
 * a large burst (1,000 jobs on one credential take ~6 minutes), while a one-off refusal (another
 * tool on the same App) costs at most 10 minutes at 75–100 %.
 */
export const LEARN_CUT_PERCENT = 75;
export const BUDGET_RECOVERY_MS = 10 * 60_000;
/** The longest any cut takes to grow back: from nothing to the configured figure (40 minutes). */
export const FULL_RECOVERY_MS = Math.ceil((100 * BUDGET_RECOVERY_MS) / (100 - LEARN_CUT_PERCENT));
/**
 * Refusals that arrive together are one lesson: a window's calls refused at once (and calls that
 * were on their way when the first refusal came back) must cut the budget once, not n times. A
 * refusal counts as a new one only when the last cut is at least this many windows old, and the
 * credential is not already waiting out a refusal (its `blocked_until`, which the first refusal set).
 */
export const LEARN_CLUSTER_WINDOWS = 2;

/** The least points a minute learning cuts to: one JIT config a window (or nothing would ever be created). */
export function minLearnedPointsPerMinute(windowMs: number): number {
  return Math.ceil((JIT_CONFIG_POINTS * 60_000) / windowMs);
}

/**
 * The points a minute in force at `now`: the configured figure, or less while a cut learned
 * from GitHub grows back (linearly, BUDGET_RECOVERY_MS per LEARN_CUT_PERCENT's complement of the
 * configured figure). Never more than configured. The SQL in src/db/budget/github-budget-store.ts
 * computes the same (effectivePointsSql), in integers.
 */
export function effectivePointsPerMinute(configured: number, learned: LearnedBudget | null, now: number): number {
  if (!learned) return configured;
  // Past this, even a cut to nothing has grown back: bounding it keeps the product exact.
  const elapsed = Math.min(Math.max(0, now - learned.at), FULL_RECOVERY_MS);
  const regrown = Math.floor((configured * (100 - LEARN_CUT_PERCENT) * elapsed) / (100 * BUDGET_RECOVERY_MS));
  return Math.min(configured, learned.pointsPerMinute + regrown);
}

/** The policy in force at `now`: the configured one with its points a minute as learned (effectivePointsPerMinute). */
export function effectivePolicy(policy: GithubBudgetPolicy, learned: LearnedBudget | null, now: number): GithubBudgetPolicy {
  return { ...policy, pointsPerMinute: effectivePointsPerMinute(policy.pointsPerMinute, learned, now) };
}

/**
 * What a secondary-limit refusal at `now` teaches: the budget cut to LEARN_CUT_PERCENT of what was
 * in force (at least one JIT config a window), or null when the refusal belongs to a cluster
 * already learned from (LEARN_CLUSTER_WINDOWS, or the credential still blocked by the refusal
 * that started it). `from` is what was in force. The SQL in src/db/budget/github-budget-store.ts
 * (learnFromRefusal) does the same in one upsert.
 */
export function learnFromRefusal(
  policy: GithubBudgetPolicy,
  learned: LearnedBudget | null,
  now: number,
  blockedUntil: number | null = null,
): { from: number; learned: LearnedBudget } | null {
  if (learned && now - learned.at < LEARN_CLUSTER_WINDOWS * policy.windowMs) return null;
  if (blockedUntil !== null && blockedUntil > now) return null;
  const from = effectivePointsPerMinute(policy.pointsPerMinute, learned, now);
  const cut = Math.floor((from * LEARN_CUT_PERCENT) / 100);
  return { from, learned: { pointsPerMinute: Math.max(minLearnedPointsPerMinute(policy.windowMs), cut), at: now } };
}

export interface BudgetRow {
  windowStart: number;
  pointsUsed: number;
  /** What GitHub's refusals taught (absent: nothing). */
  learned?: LearnedBudget | null;
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
 * src/db/budget/github-budget-store.ts computes the same in the reservation's own statement.
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
 * (fairAllowance). The window's points are those of the policy in force at `now` (effectivePolicy:
 * less while a cut learned from GitHub grows back). The SQL in src/db/budget/github-budget-store.ts does
 * the same in one statement.
 */
export function reserve(
  row: BudgetRow | null,
  windowStart: number,
  wanted: number,
  policy: GithubBudgetPolicy,
  fairness: Fairness = NO_RIVALS,
  now = windowStart,
): { granted: number; row: BudgetRow } {
  // What the window may spend: the configured figure, or less while a learned cut grows back.
  const perWindow = pointsPerWindow(effectivePolicy(policy, row?.learned ?? null, now));
  if (row && row.windowStart > windowStart) return { granted: 0, row };
  const used = row && row.windowStart === windowStart ? row.pointsUsed : 0;
  const allowance = fairAllowance(Math.floor(perWindow / JIT_CONFIG_POINTS), fairness);
  const granted = Math.max(0, Math.min(wanted, allowance, Math.floor((perWindow - used) / JIT_CONFIG_POINTS)));
  return { granted, row: { ...row, windowStart, pointsUsed: used + granted * JIT_CONFIG_POINTS } };
}
