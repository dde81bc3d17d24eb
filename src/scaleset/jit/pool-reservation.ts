import { reserveJitConfigs } from "../../db/github-budget-store";
import type { LineGrant } from "./jit-budget-line";

/**
 * A window's JIT configs from a credential pool: each credential in turn (the entity's own first)
 * is asked for what the others have not granted yet, within its own budget and fair share, until
 * the line is served or the pool is spent. A failing or rate-limited credential grants nothing
 * (its reservation says so) and the next one is asked. Each credential is its own D1 round trip:
 * a pool holds a few credentials, and a reservation serves a whole line of machines.
 */
export async function reserveFromPool(
  db: D1Database,
  input: {
    /** Credential ids, in the order they are drawn from. */
    pool: readonly string[];
    scaleSetId: string;
    windowStart: number;
    windowMs: number;
    wanted: number;
    pointsPerWindow: number;
    /** Waits to count when the pool as a whole falls short (counted on the last credential asked). */
    countWaits: number;
    now: number;
  },
): Promise<LineGrant[]> {
  const grants: LineGrant[] = [];
  let left = input.wanted;
  for (const [i, credentialId] of input.pool.entries()) {
    if (left <= 0) break;
    const last = i === input.pool.length - 1;
    const granted = await reserveJitConfigs(db, {
      credentialId,
      scaleSetId: input.scaleSetId,
      windowStart: input.windowStart,
      windowMs: input.windowMs,
      wanted: left,
      pointsPerWindow: input.pointsPerWindow,
      countWaits: last ? input.countWaits : 0,
      now: input.now,
    });
    if (granted > 0) grants.push({ credentialId, count: Math.min(granted, left) });
    left -= granted;
  }
  return grants;
}
