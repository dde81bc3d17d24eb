import { type InvocationCost, largest } from "./invocation-cost";

/**
 * The most one invocation of each kind spent of the per-invocation budgets (subrequests, D1
 * queries), since this isolate started: what `GET /api/v1/usage` and the bench show against the
 * Free plan's 50 and 50. Work an invocation leaves running keeps counting into its cost after it
 * returned, so each kind's last few stay open and are folded in only when they drop off.
 */

const OPEN = 16;
const kinds = new Map<string, { settled: InvocationCost | null; open: InvocationCost[]; count: number }>();

/** Keeps `cost` (still being added to) as one invocation of `kind`. */
export function recordInvocation(kind: string, cost: InvocationCost): void {
  const k = kinds.get(kind) ?? { settled: null, open: [], count: 0 };
  kinds.set(kind, k);
  k.count++;
  k.open.push(cost);
  if (k.open.length > OPEN) k.settled = largest(k.settled, k.open.shift()!);
}

/** Each kind's invocations counted and the most one of them spent, field by field. */
export function largestInvocations(): { kind: string; invocations: number; largest: InvocationCost }[] {
  return [...kinds]
    .map(([kind, k]) => {
      let max = k.settled;
      for (const c of k.open) max = largest(max, c);
      return { kind, invocations: k.count, largest: max! };
    })
    .sort((a, b) => (a.kind < b.kind ? -1 : 1));
}

/** Forgets every kind (tests that measure one installation's flows from a clean start). */
export function resetInvocationLedger(): void {
  kinds.clear();
}
