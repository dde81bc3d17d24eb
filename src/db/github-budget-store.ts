import { JIT_CONFIG_POINTS } from "../github/budget";

/**
 * D1 access for the per-credential GitHub budget (github/budget.ts has the arithmetic and why).
 * One reservation is one batch: a conditional upsert that takes what the window has left (within
 * the asking scale set's fair share), the ask recorded for the next reservations' fair share, and,
 * when the caller asks, a wait counter bumped only if the reservation fell short.
 */

/**
 * ?1 credential, ?2 window start, ?3 JIT configs wanted, ?4 points per window, ?5 points per JIT,
 * ?6 the asking scale set, ?7 window length. `allowance` is github/budget.ts's fairAllowance: the
 * other scale sets on the credential whose last ask (this window or the one before) fell short,
 * each kept what it lacks up to its share, less what this one already got in this window.
 * SET expressions read the row as it was, so `last_grant` and `points_used` agree.
 */
/** In the window already open: what the new row would have got (the fair allowance applied), within what is left. */
const GRANT_IN_WINDOW = "min(CAST(excluded.last_grant / ?5 AS INTEGER), CAST(max(0, ?4 - points_used) / ?5 AS INTEGER)) * ?5";
const RESERVE = `WITH others AS (
  SELECT wanted - granted AS short FROM github_budget_demand
  WHERE credential_id = ?1 AND scale_set_id <> ?6 AND window_start >= ?2 - ?7 AND wanted > granted
), fair AS (
  SELECT CAST(?4 / ?5 AS INTEGER) AS per_window, (SELECT count(*) FROM others) AS n,
    max(1, CAST(?4 / ?5 AS INTEGER) / (1 + (SELECT count(*) FROM others))) AS share
), allowance AS (
  SELECT CASE WHEN n = 0 THEN per_window ELSE max(0,
    max(share, per_window - (SELECT coalesce(sum(min(short, share)), 0) FROM others))
    - coalesce((SELECT granted_in_window FROM github_budget_demand WHERE scale_set_id = ?6 AND credential_id = ?1 AND window_start = ?2), 0)
  ) END AS jit FROM fair
)
INSERT INTO github_budget (credential_id, window_start, points_used, last_grant)
SELECT ?1, ?2, g, g FROM (SELECT min(?3, CAST(?4 / ?5 AS INTEGER), (SELECT jit FROM allowance)) * ?5 AS g)
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
RETURNING last_grant`;

/**
 * ?1 credential, ?2 window start, ?3 wanted, ?5 points per JIT, ?6 scale set: this ask, as the
 * reservation just made answered it, for the next reservations' fair share. A scale set whose
 * credential changed starts its window count afresh.
 */
const RECORD_DEMAND = `INSERT INTO github_budget_demand (scale_set_id, credential_id, window_start, wanted, granted, granted_in_window)
SELECT ?6, ?1, ?2, ?3, g, g FROM (SELECT CAST(last_grant / ?5 AS INTEGER) AS g FROM github_budget WHERE credential_id = ?1)
WHERE EXISTS (SELECT 1 FROM scale_sets WHERE id = ?6)
ON CONFLICT(scale_set_id) DO UPDATE SET
  granted_in_window = CASE WHEN window_start = excluded.window_start AND credential_id = excluded.credential_id
    THEN granted_in_window + excluded.granted ELSE excluded.granted END,
  credential_id = excluded.credential_id,
  window_start = excluded.window_start,
  wanted = excluded.wanted,
  granted = excluded.granted`;

/**
 * ?1 counter, ?2 now, ?3 credential, ?4 points wanted, ?5 waits to count at most, ?6 points per
 * JIT: adds the JIT configs the reservation just made fell short by, up to ?5 (a line of machines
 * counts each of its new waiters left without a grant; an object counts its pass once).
 */
const COUNT_WAIT = `INSERT INTO counters (name, value, updated_at)
SELECT ?1, min(?5, (?4 - last_grant) / ?6), ?2 FROM github_budget WHERE credential_id = ?3 AND last_grant < ?4
ON CONFLICT(name) DO UPDATE SET value = value + excluded.value, updated_at = excluded.updated_at`;

/** The counter a credential's budget waits are counted in (`/metrics`: edgerunner_github_budget_waits_total). */
export const budgetWaitCounter = (credentialId: string) => `github.budget_waits|${credentialId}`;

/**
 * Reserves up to `wanted` JIT configs for scale set `scaleSetId` on `credentialId` in the window
 * starting at `windowStart`, within the scale set's fair share when others on the credential are
 * short (github/budget.ts, reserve and fairAllowance); returns how many were granted, and records
 * the ask for the next reservations. `countWaits` adds to the credential's wait counter how many
 * fewer were granted than wanted, at most `countWaits` (0: nothing is counted). An unknown credential is not budgeted (its calls fail on their own): all are granted.
 * One batch (one D1 round trip, one transaction) whatever the number of scale sets.
 */
export async function reserveJitConfigs(
  d1: D1Database,
  input: {
    credentialId: string;
    scaleSetId: string;
    windowStart: number;
    windowMs: number;
    wanted: number;
    pointsPerWindow: number;
    countWaits: number;
    now: number;
  },
): Promise<number> {
  const { credentialId, scaleSetId, windowStart, windowMs, wanted, pointsPerWindow } = input;
  const params = [credentialId, windowStart, wanted, pointsPerWindow, JIT_CONFIG_POINTS, scaleSetId, windowMs];
  const statements = [d1.prepare(RESERVE).bind(...params), d1.prepare(RECORD_DEMAND).bind(...params.slice(0, 6))];
  if (input.countWaits > 0) {
    statements.push(
      d1
        .prepare(COUNT_WAIT)
        .bind(budgetWaitCounter(credentialId), input.now, credentialId, wanted * JIT_CONFIG_POINTS, input.countWaits, JIT_CONFIG_POINTS),
    );
  }
  const [reserved] = await d1.batch<{ last_grant: number }>(statements);
  const row = reserved?.results[0];
  return row ? Math.floor(Number(row.last_grant) / JIT_CONFIG_POINTS) : wanted;
}
