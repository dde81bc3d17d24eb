/**
 * When delivery recovery's next pass comes. A quiet pass waits the interval (one list call per
 * hook per interval is the whole cost while nothing fails). Two things bring it sooner:
 *
 * - work left over (more failures than one pass may fetch): a few seconds on;
 * - passing trouble at GitHub (a 5xx after the client's own retries, a network failure, a
 *   rate limit): the delivery it was about to take in may be a job's `completed`, and its
 *   machine is billed until we know, so waiting a whole interval for one 502 costs money. It
 *   comes back after RETRY_FIRST_MS, doubling with each troubled pass in a row up to the
 *   interval, so a GitHub outage costs a few calls a minute, not one per few seconds; a rate
 *   limit is waited out to its reset.
 */

export const SOON_MS = 5_000;

/**
 * A quiet pass (nothing else to write) records itself at most this often: the record is a row
 * written, and a pass a minute wrote 1,440 a day to say nothing happened. The setup check allows
 * for it before it calls recovery late.
 */
export const LAST_PASS_REFRESH_MS = 5 * 60_000;
export const RETRY_FIRST_MS = 10_000;

export interface PassTrouble {
  /** The latest time GitHub told us to wait until (a rate limit's reset), if it said. */
  until: number | null;
}

export interface NextPass {
  at: number;
  /** Troubled passes in a row, this one included: what the next pass's backoff starts from. */
  troubleStreak: number;
}

export function nextPass(p: {
  now: number;
  intervalMs: number;
  more: boolean;
  trouble: PassTrouble | null;
  troubleStreak: number;
}): NextPass {
  if (p.trouble) {
    const backoff = Math.min(p.intervalMs, RETRY_FIRST_MS * 2 ** Math.min(p.troubleStreak, 20));
    const waitOut = p.trouble.until === null ? 0 : Math.min(p.intervalMs, p.trouble.until - p.now);
    const delay = Math.max(backoff, waitOut, p.more ? SOON_MS : 0);
    return { at: p.now + delay, troubleStreak: p.troubleStreak + 1 };
  }
  return { at: p.now + (p.more ? SOON_MS : p.intervalMs), troubleStreak: 0 };
}

/** The troubles of one pass as one: the latest wait GitHub asked for, if any asked. */
export function worstTrouble(troubles: readonly (PassTrouble | null)[]): PassTrouble | null {
  const seen = troubles.filter((t): t is PassTrouble => t !== null);
  if (!seen.length) return null;
  const untils = seen.map((t) => t.until).filter((u): u is number => u !== null);
  return { until: untils.length ? Math.max(...untils) : null };
}
