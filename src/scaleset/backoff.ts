/**
 * Backoff rules, as plain functions of counts and times (milliseconds).
 *
 * Deleting an instance: 1 s, doubling, at most 5 min between tries (GARM's scale-set rule).
 * Creating in a scale set: after each straight failure, wait `failures × interval` from the
 * last one (Coder's prebuild rule); after `hardLimit` straight failures stop creating until
 * an operator updates or resets the scale set.
 */

export const DELETE_BACKOFF_BASE_MS = 1_000;
export const DELETE_BACKOFF_MAX_MS = 5 * 60_000;

/** Delay before retry number `attempt` (1 = first retry) of a failed delete. */
export function deleteRetryDelay(attempt: number): number {
  if (attempt <= 0) return 0;
  return Math.min(DELETE_BACKOFF_BASE_MS * 2 ** (attempt - 1), DELETE_BACKOFF_MAX_MS);
}

export interface CreateBackoffPolicy {
  intervalMs: number;
  hardLimit: number;
}

export const DEFAULT_CREATE_BACKOFF: CreateBackoffPolicy = { intervalMs: 10_000, hardLimit: 5 };

export interface CreateBackoff {
  /** Straight create failures since the last success or reset. */
  failures: number;
  lastFailureAt: number | null;
  /** Set when failures reached the hard limit: no creation until update or reset. */
  hardLimitedAt: number | null;
}

export const NO_CREATE_BACKOFF: CreateBackoff = { failures: 0, lastFailureAt: null, hardLimitedAt: null };

export function recordCreateFailure(state: CreateBackoff, now: number, policy: CreateBackoffPolicy): CreateBackoff {
  const failures = state.failures + 1;
  return {
    failures,
    lastFailureAt: now,
    hardLimitedAt: state.hardLimitedAt ?? (failures >= policy.hardLimit ? now : null),
  };
}

export function recordCreateSuccess(state: CreateBackoff): CreateBackoff {
  return state.hardLimitedAt === null && state.failures === 0 ? state : { ...NO_CREATE_BACKOFF };
}

/** When creation may next happen: `null` when never (hard limit), `now` or earlier when allowed. */
export function createAllowedAt(state: CreateBackoff, policy: CreateBackoffPolicy): number | null {
  if (state.hardLimitedAt !== null) return null;
  if (state.failures === 0 || state.lastFailureAt === null) return 0;
  return state.lastFailureAt + state.failures * policy.intervalMs;
}

/**
 * A hard limit belongs to the scale set as it was when the limit was hit (`limitVersion`, its
 * `updated_at` then): an update of the scale set since lifts it. A limit hit outside a pass (a
 * callback) has no version yet and takes the scale set's current one. Returns what changed.
 */
export function hardLimitAgainst(
  backoff: CreateBackoff,
  limitVersion: number | null,
  scaleSetUpdatedAt: number,
): { lifted: true } | { setVersion: number } | null {
  if (backoff.hardLimitedAt === null) return null;
  if (limitVersion === null) return { setVersion: scaleSetUpdatedAt };
  return scaleSetUpdatedAt > limitVersion ? { lifted: true } : null;
}
