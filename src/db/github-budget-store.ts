import { JIT_CONFIG_POINTS } from "../github/budget";

/**
 * D1 access for the per-credential GitHub budget (github/budget.ts has the arithmetic and why).
 * One reservation is one batch: a conditional upsert that takes what the window has left, and,
 * when the caller asks, a wait counter bumped only if the reservation fell short.
 */

/**
 * ?1 credential, ?2 window start, ?3 JIT configs wanted, ?4 points per window, ?5 points per JIT.
 * SET expressions read the row as it was, so `last_grant` and `points_used` agree.
 */
const GRANT_IN_WINDOW = "min(?3, CAST(max(0, ?4 - points_used) / ?5 AS INTEGER)) * ?5";
const RESERVE = `INSERT INTO github_budget (credential_id, window_start, points_used, last_grant)
SELECT ?1, ?2, g, g FROM (SELECT min(?3, CAST(?4 / ?5 AS INTEGER)) * ?5 AS g)
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

/** ?1 counter, ?2 now, ?3 credential, ?4 points wanted: +1 when the reservation just made got less. */
const COUNT_WAIT = `INSERT INTO counters (name, value, updated_at)
SELECT ?1, 1, ?2 WHERE (SELECT last_grant FROM github_budget WHERE credential_id = ?3) < ?4
ON CONFLICT(name) DO UPDATE SET value = value + 1, updated_at = excluded.updated_at`;

/** The counter a credential's budget waits are counted in (`/metrics`: edgerunner_github_budget_waits_total). */
export const budgetWaitCounter = (credentialId: string) => `github.budget_waits|${credentialId}`;

/**
 * Reserves up to `wanted` JIT configs for `credentialId` in the window starting at `windowStart`;
 * returns how many were granted. `countWait` adds one to the credential's wait counter if fewer
 * were. An unknown credential is not budgeted (its calls fail on their own): all are granted.
 */
export async function reserveJitConfigs(
  d1: D1Database,
  input: { credentialId: string; windowStart: number; wanted: number; pointsPerWindow: number; countWait: boolean; now: number },
): Promise<number> {
  const { credentialId, windowStart, wanted, pointsPerWindow } = input;
  const statements = [d1.prepare(RESERVE).bind(credentialId, windowStart, wanted, pointsPerWindow, JIT_CONFIG_POINTS)];
  if (input.countWait) {
    statements.push(d1.prepare(COUNT_WAIT).bind(budgetWaitCounter(credentialId), input.now, credentialId, wanted * JIT_CONFIG_POINTS));
  }
  const [reserved] = await d1.batch<{ last_grant: number }>(statements);
  const row = reserved?.results[0];
  return row ? Math.floor(Number(row.last_grant) / JIT_CONFIG_POINTS) : wanted;
}

/**
 * Whether the credential's window starting at `windowStart` has a JIT config left: a read, so
 * that a burst's machines waiting in line look before they write (the reservation is an upsert
 * on one row per credential, and D1 runs writes one at a time).
 */
export async function jitBudgetLeft(d1: D1Database, credentialId: string, windowStart: number, pointsPerWindow: number): Promise<boolean> {
  const row = await d1
    .prepare("SELECT window_start, points_used FROM github_budget WHERE credential_id = ?")
    .bind(credentialId)
    .first<{ window_start: number; points_used: number }>();
  if (!row || row.window_start < windowStart) return true;
  return row.window_start === windowStart && row.points_used + JIT_CONFIG_POINTS <= pointsPerWindow;
}
