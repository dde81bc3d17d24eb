import { reserveJitConfigs } from "../../db/budget/github-budget-store";
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
  input: Omit<Parameters<typeof reserveJitConfigs>[1], "credentialId"> & {
    /** Credential ids, in the order they are drawn from. Waits are counted on the last one asked, when the pool as a whole falls short. */
    pool: readonly string[];
  },
): Promise<{ grants: LineGrant[]; usable: boolean }> {
  const { pool, ...ask } = input;
  const grants: LineGrant[] = [];
  let left = input.wanted;
  let usable = false;
  for (const [i, credentialId] of pool.entries()) {
    if (left <= 0) break;
    const last = i === pool.length - 1;
    const r = await reserveJitConfigs(db, { ...ask, credentialId, wanted: left, countWaits: last ? input.countWaits : 0 });
    if (!r.usable) continue;
    usable = true;
    if (r.granted > 0) grants.push({ credentialId, count: Math.min(r.granted, left) });
    left -= r.granted;
  }
  return { grants, usable };
}
