import { reserveJitConfigs } from "../../db/github-budget-store";
import type { GithubBudgetPolicy } from "../../github/budget";
import type { LineGrant } from "./jit-budget-line";

/**
 * A window's JIT configs from a credential pool: each credential in turn (the entity's own first)
 * is asked for what the others have not granted yet, within its own budget (its learned figure
 * included) and fair share, until the line is served or the pool is spent. A failing or
 * rate-limited credential grants nothing (its reservation says so) and the next one is asked.
 * Each credential is its own D1 round trip: a pool holds a few credentials, and a reservation
 * serves a whole line of machines.
 *
 * `usable` is false when no credential of the pool may be used at all: that is not the budget's
 * to pace (the calls fail or wait on their own), and the caller treats it as before pools.
 */
export async function reserveFromPool(
  db: D1Database,
  input: {
    /** Credential ids, in the order they are drawn from. */
    pool: readonly string[];
    scaleSetId: string;
    windowStart: number;
    policy: GithubBudgetPolicy;
    wanted: number;
    /** Waits to count when the pool as a whole falls short (counted on the last credential asked). */
    countWaits: number;
    now: number;
  },
): Promise<{ grants: LineGrant[]; usable: boolean }> {
  const grants: LineGrant[] = [];
  let left = input.wanted;
  let usable = false;
  for (const [i, credentialId] of input.pool.entries()) {
    if (left <= 0) break;
    const last = i === input.pool.length - 1;
    const r = await reserveJitConfigs(db, {
      credentialId,
      scaleSetId: input.scaleSetId,
      windowStart: input.windowStart,
      policy: input.policy,
      wanted: left,
      countWaits: last ? input.countWaits : 0,
      now: input.now,
    });
    if (!r.usable) continue;
    usable = true;
    if (r.granted > 0) grants.push({ credentialId, count: Math.min(r.granted, left) });
    left -= r.granted;
  }
  return { grants, usable };
}
