import {
  BUDGET_RECOVERY_MS,
  effectivePointsPerMinute,
  FULL_RECOVERY_MS,
  type GithubBudgetPolicy,
  JIT_CONFIG_POINTS,
  LEARN_CLUSTER_WINDOWS,
  LEARN_CUT_PERCENT,
  minLearnedPointsPerMinute,
} from "../../github/budget/budget";

/**
 * D1 access for the per-credential GitHub budget (github/budget/budget.ts has the arithmetic and why).
 * One reservation is one batch: a conditional upsert that takes what the window has left (within
 * the asking scale set's fair share, out of the points a minute in force: the configured figure,
 * or less while a cut learned from GitHub grows back), the ask recorded for the next
 * reservations' fair share, and, when the caller asks, a wait counter bumped only if the
 * reservation fell short. A credential GitHub refused (failing) or that waits out a rate limit
 * gets nothing. A secondary-limit refusal is one batch too: the cut (learnFromRefusal).
 */

/**
 * github/budget/budget.ts's effectivePointsPerMinute as SQL: `configured` a minute, or `learned` plus
 * what grew back since `at`, whichever is less. Integer arithmetic, so it agrees with the
 * function's floors.
 */
const effectivePointsSql = (configured: string, now: string, learned: string, at: string) =>
  `(CASE WHEN ${learned} IS NULL THEN ${configured} ELSE min(${configured}, ${learned} + CAST(${configured} * ${100 - LEARN_CUT_PERCENT} * min(max(0, ${now} - ${at}), ${FULL_RECOVERY_MS}) / ${100 * BUDGET_RECOVERY_MS} AS INTEGER)) END)`;

/** github/budget/budget.ts's pointsPerWindow of the effective figure: the window's share, at least one JIT config. */
const pointsPerWindowSql = (configured: string, now: string, windowMs: string, learned: string, at: string) =>
  `max(${JIT_CONFIG_POINTS}, CAST(${effectivePointsSql(configured, now, learned, at)} * ${windowMs} / 60000 AS INTEGER))`;

/** GitHub refused the credential (401: failing), or it waits out a rate limit at `now`. */
const unusableSql = (credential: string, now: string) =>
  `EXISTS (SELECT 1 FROM github_credential_state WHERE credential_id = ${credential} AND (health = 'failing' OR blocked_until > ${now}))`;

/**
 * ?1 credential, ?2 window start, ?3 JIT configs wanted, ?4 configured points a minute, ?5 points
 * per JIT, ?6 the asking scale set, ?7 window length, ?8 now. `per_window` is the window's points
 * out of the figure in force (github/budget/budget.ts, effectivePolicy: the learned cut growing back).
 * `allowance` is github/budget/budget.ts's fairAllowance: the other scale sets on the credential whose
 * last ask (this window or the one before) fell short, each kept what it lacks up to its share,
 * less what this one already got in this window. An unusable credential is granted 0 (the row
 * still moves to the window, so the demand recorded after agrees). SET expressions read the row
 * as it was, so `last_grant` and `points_used` agree.
 */
/** In the window already open: what the new row would have got (the fair allowance applied), within what is left. */
const GRANT_IN_WINDOW = `min(CAST(excluded.last_grant / ?5 AS INTEGER), CAST(max(0, ${pointsPerWindowSql("?4", "?8", "?7", "learned_points_per_minute", "learned_at")} - points_used) / ?5 AS INTEGER)) * ?5`;
const RESERVE = `WITH learned AS (
  SELECT learned_points_per_minute AS points, learned_at AS at FROM github_budget WHERE credential_id = ?1
), budget AS (
  SELECT CAST(${pointsPerWindowSql("?4", "?8", "?7", "(SELECT points FROM learned)", "(SELECT at FROM learned)")} / ?5 AS INTEGER) AS per_window_jit
), others AS (
  SELECT wanted - granted AS short FROM github_budget_demand
  WHERE credential_id = ?1 AND scale_set_id <> ?6 AND window_start >= ?2 - ?7 AND wanted > granted
), fair AS (
  SELECT per_window_jit AS per_window, (SELECT count(*) FROM others) AS n,
    max(1, per_window_jit / (1 + (SELECT count(*) FROM others))) AS share FROM budget
), allowance AS (
  SELECT CASE WHEN n = 0 THEN per_window ELSE max(0,
    max(share, per_window - (SELECT coalesce(sum(min(short, share)), 0) FROM others))
    - coalesce((SELECT granted_in_window FROM github_budget_demand WHERE scale_set_id = ?6 AND credential_id = ?1 AND window_start = ?2), 0)
  ) END AS jit FROM fair
)
INSERT INTO github_budget (credential_id, window_start, points_used, last_grant)
SELECT ?1, ?2, g, g FROM (
  SELECT CASE WHEN ${unusableSql("?1", "?8")} THEN 0 ELSE min(?3, (SELECT per_window_jit FROM budget), (SELECT jit FROM allowance)) * ?5 END AS g
)
WHERE EXISTS (SELECT 1 FROM github_credentials WHERE id = ?1)
ON CONFLICT(credential_id) DO UPDATE SET
  last_grant = CASE
    WHEN excluded.window_start < window_start THEN 0
    WHEN excluded.window_start = window_start THEN ${GRANT_IN_WINDOW}
    ELSE excluded.last_grant END,
  points_used = CASE
    WHEN excluded.window_start < window_start THEN points_used
    WHEN excluded.window_start = window_start THEN points_used + ${GRANT_IN_WINDOW}
    ELSE excluded.points_used END,
  window_start = max(window_start, excluded.window_start)
RETURNING last_grant, NOT ${unusableSql("?1", "?8")} AS usable`;

/**
 * ?1 credential, ?2 window start, ?3 wanted, ?5 points per JIT, ?6 scale set: this ask, as the
 * reservation just made answered it, for the next reservations' fair share. Two statements, so
 * that an ask in the same window as the last (most of them) writes the row alone: an upsert sets
 * credential_id and window_start, and each statement that sets them writes their index entry too,
 * changed or not (a row written per reservation). SAME_WINDOW adds to the window's row;
 * RECORD_DEMAND starts the row, or a new window (a scale set whose credential changed starts its
 * window count afresh), and leaves a row SAME_WINDOW just wrote alone.
 */
const GRANTED = "(SELECT CAST(last_grant / ?5 AS INTEGER) FROM github_budget WHERE credential_id = ?1)";
const SAME_WINDOW = `UPDATE github_budget_demand SET granted_in_window = granted_in_window + ${GRANTED}, wanted = ?3, granted = ${GRANTED}
WHERE scale_set_id = ?6 AND credential_id = ?1 AND window_start = ?2 AND EXISTS (SELECT 1 FROM github_budget WHERE credential_id = ?1)`;
const RECORD_DEMAND = `INSERT INTO github_budget_demand (scale_set_id, credential_id, window_start, wanted, granted, granted_in_window)
SELECT ?6, ?1, ?2, ?3, g, g FROM (SELECT CAST(last_grant / ?5 AS INTEGER) AS g FROM github_budget WHERE credential_id = ?1)
WHERE EXISTS (SELECT 1 FROM scale_sets WHERE id = ?6)
ON CONFLICT(scale_set_id) DO UPDATE SET
  granted_in_window = excluded.granted,
  credential_id = excluded.credential_id,
  window_start = excluded.window_start,
  wanted = excluded.wanted,
  granted = excluded.granted
WHERE credential_id != excluded.credential_id OR window_start != excluded.window_start`;

/**
 * ?1 counter, ?2 now, ?3 credential, ?4 points wanted, ?5 waits to count at most, ?6 points per
 * JIT: adds the JIT configs the reservation just made fell short by, up to ?5 (a line of machines
 * counts each of its new waiters left without a grant; an object counts its pass once). A
 * credential that cannot be used is not waiting for its budget: nothing is counted.
 */
const COUNT_WAIT = `INSERT INTO counters (name, value, updated_at)
SELECT ?1, min(?5, (?4 - last_grant) / ?6), ?2 FROM github_budget
WHERE credential_id = ?3 AND last_grant < ?4 AND NOT ${unusableSql("?3", "?2")}
ON CONFLICT(name) DO UPDATE SET value = value + excluded.value, updated_at = excluded.updated_at`;

/** The counter a credential's budget waits are counted in (`/metrics`: edgerunner_github_budget_waits_total). */
export const budgetWaitCounter = (credentialId: string) => `github.budget_waits|${credentialId}`;

/** What a reservation got: `usable` false when the credential is failing or waits out a rate limit (then `granted` is 0). */
export interface JitReservation {
  granted: number;
  usable: boolean;
}

/**
 * Reserves up to `wanted` JIT configs for scale set `scaleSetId` on `credentialId` in the window
 * starting at `windowStart`, within the scale set's fair share when others on the credential are
 * short (github/budget/budget.ts, reserve and fairAllowance), out of the points a minute in force at
 * `now` (the policy's, or less while a cut learned from GitHub grows back); returns how many were
 * granted, and records the ask for the next reservations. `countWaits` adds to the credential's
 * wait counter how many fewer were granted than wanted, at most `countWaits` (0: nothing is
 * counted). A credential GitHub refused (health failing) or that waits out a rate limit
 * (blocked_until after `now`) is granted nothing and is `usable: false`, so a caller with other
 * credentials can go to the next one. An unknown credential is not budgeted (its calls fail on
 * their own): all are granted, `usable: true`. One batch (one D1 round trip, one transaction)
 * whatever the number of scale sets.
 */
export async function reserveJitConfigs(
  d1: D1Database,
  input: {
    credentialId: string;
    scaleSetId: string;
    windowStart: number;
    policy: GithubBudgetPolicy;
    wanted: number;
    countWaits: number;
    now: number;
  },
): Promise<JitReservation> {
  const { credentialId, scaleSetId, windowStart, policy, wanted, now } = input;
  const params = [credentialId, windowStart, wanted, policy.pointsPerMinute, JIT_CONFIG_POINTS, scaleSetId, policy.windowMs, now];
  const demand = params.slice(0, 6);
  const statements = [
    d1.prepare(RESERVE).bind(...params),
    d1.prepare(SAME_WINDOW).bind(...demand),
    d1.prepare(RECORD_DEMAND).bind(...demand),
  ];
  if (input.countWaits > 0) {
    statements.push(
      d1
        .prepare(COUNT_WAIT)
        .bind(budgetWaitCounter(credentialId), now, credentialId, wanted * JIT_CONFIG_POINTS, input.countWaits, JIT_CONFIG_POINTS),
    );
  }
  const [reserved] = await d1.batch<{ last_grant: number; usable: number }>(statements);
  const row = reserved?.results[0];
  if (!row) return { granted: wanted, usable: true };
  return { granted: Math.floor(Number(row.last_grant) / JIT_CONFIG_POINTS), usable: Boolean(row.usable) };
}

/**
 * ?1 credential, ?2 configured points a minute, ?3 window length, ?4 now: whether a refusal at
 * ?4 is a new lesson (github/budget/budget.ts, learnFromRefusal): the credential exists, does not
 * already wait out a refusal, and was not cut in the last LEARN_CLUSTER_WINDOWS windows.
 */
const CUT_COUNTS = `EXISTS (SELECT 1 FROM github_credentials WHERE id = ?1)
  AND NOT EXISTS (SELECT 1 FROM github_credential_state WHERE credential_id = ?1 AND blocked_until > ?4)
  AND NOT EXISTS (SELECT 1 FROM github_budget WHERE credential_id = ?1 AND learned_at IS NOT NULL AND ?4 - learned_at < ${LEARN_CLUSTER_WINDOWS} * ?3)`;
/** ?1 credential, ?2 configured, ?4 now: the points a minute in force before the cut. */
const IN_FORCE = effectivePointsSql(
  "?2",
  "?4",
  "(SELECT learned_points_per_minute FROM github_budget WHERE credential_id = ?1)",
  "(SELECT learned_at FROM github_budget WHERE credential_id = ?1)",
);
const BEFORE_CUT = `SELECT ${IN_FORCE} AS in_force`;
/** ?5 the least it may be cut to (one JIT config a window). A credential never budgeted gets its row here. */
const CUT = `INSERT INTO github_budget (credential_id, window_start, points_used, last_grant, learned_points_per_minute, learned_at)
SELECT ?1, 0, 0, 0, max(?5, CAST(${IN_FORCE} * ${LEARN_CUT_PERCENT} / 100 AS INTEGER)), ?4 WHERE ${CUT_COUNTS}
ON CONFLICT(credential_id) DO UPDATE SET
  learned_points_per_minute = excluded.learned_points_per_minute,
  learned_at = excluded.learned_at
RETURNING learned_points_per_minute`;
/** ?5 counter: the cut counted, on the same condition and the same state as the cut itself. */
const COUNT_CUT = `INSERT INTO counters (name, value, updated_at) SELECT ?5, 1, ?4 WHERE ${CUT_COUNTS}
ON CONFLICT(name) DO UPDATE SET value = value + excluded.value, updated_at = excluded.updated_at`;

/** The counter a credential's learned cuts are counted in (`/metrics`: edgerunner_github_budget_cuts_total). */
export const budgetCutCounter = (credentialId: string) => `github.budget_cuts|${credentialId}`;

/**
 * GitHub refused a call made with `credentialId` with a secondary limit at `now`: the budget is cut
 * to github/budget/budget.ts's learnFromRefusal (LEARN_CUT_PERCENT of what was in force, at least one JIT
 * config a window) and the cut counted, unless the refusal belongs to a cluster already learned
 * from. Returns the points a minute before and after the cut, or null when nothing was cut. One
 * batch: what was in force, the count and the cut read the same state (one transaction).
 */
export async function learnFromRefusal(
  d1: D1Database,
  credentialId: string,
  policy: GithubBudgetPolicy,
  now: number,
): Promise<{ from: number; to: number } | null> {
  const params = [credentialId, policy.pointsPerMinute, policy.windowMs, now];
  const [before, , cut] = await d1.batch<Record<string, number>>([
    d1.prepare(BEFORE_CUT).bind(...params),
    d1.prepare(COUNT_CUT).bind(...params, budgetCutCounter(credentialId)),
    d1.prepare(CUT).bind(...params, minLearnedPointsPerMinute(policy.windowMs)),
  ]);
  const row = cut?.results[0];
  if (!row) return null;
  return { from: Number(before!.results[0]!.in_force), to: Number(row.learned_points_per_minute) };
}

/** What the status views show of a credential's budget. */
export interface CredentialBudget {
  configuredPointsPerMinute: number;
  /** The points a minute in force now: the configured figure, or less while a cut learned from GitHub grows back. */
  effectivePointsPerMinute: number;
  /** When GitHub's refusals last cut it (null: never). */
  learnedAt: number | null;
  /** False while GitHub refuses the credential (failing) or it waits out a rate limit. */
  usable: boolean;
}

/** One query: each known credential's budget at `now` under `policy` (github/budget/budget.ts, effectivePointsPerMinute). */
export async function readCredentialBudgets(
  db: D1Database,
  credentialIds: string[],
  now: number,
  policy: GithubBudgetPolicy,
): Promise<Map<string, CredentialBudget>> {
  const budgets = new Map<string, CredentialBudget>();
  if (!credentialIds.length) return budgets;
  const { results } = await db
    .prepare(
      `SELECT c.id, b.learned_points_per_minute, b.learned_at, s.health, s.blocked_until
       FROM github_credentials c
       LEFT JOIN github_budget b ON b.credential_id = c.id
       LEFT JOIN github_credential_state s ON s.credential_id = c.id
       WHERE c.id IN (SELECT value FROM json_each(?1))`,
    )
    .bind(JSON.stringify(credentialIds))
    .all<{
      id: string;
      learned_points_per_minute: number | null;
      learned_at: number | null;
      health: string | null;
      blocked_until: number | null;
    }>();
  for (const r of results) {
    const learned =
      r.learned_points_per_minute === null || r.learned_at === null
        ? null
        : { pointsPerMinute: r.learned_points_per_minute, at: r.learned_at };
    budgets.set(r.id, {
      configuredPointsPerMinute: policy.pointsPerMinute,
      effectivePointsPerMinute: effectivePointsPerMinute(policy.pointsPerMinute, learned, now),
      learnedAt: r.learned_at,
      usable: r.health !== "failing" && !(r.blocked_until !== null && r.blocked_until > now),
    });
  }
  return budgets;
}
