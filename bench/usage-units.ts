/**
 * The coordinator's own count of what it spent in Cloudflare's billing units (GET /api/v1/usage,
 * src/lib/usage-tally.ts), read before and after a piece of work: bench/cost.ts and the bursts
 * (bench/burst.ts) turn the difference into units per job.
 */
import type { Stack } from "../e2e/stack.ts";
import { UNITS, type Units } from "../src/usage/price-table.ts";

export interface UsageView {
  units: Units;
  by_kind: { kind: string; units: Units; subrequests: number }[];
  largest_invocations: { kind: string; invocations: number; subrequests: number; d1_queries: number }[];
}

/** The month so far as the coordinator counts it (what it wrote plus what it has not written yet). */
export const readUsage = async (stack: Stack) => (await stack.coordinator.api("GET", "/usage")) as UsageView;

export const minus = (a: Units, b: Units): Units => Object.fromEntries(UNITS.map((u) => [u, a[u] - b[u]])) as Units;
export const plus = (a: Units, b: Units): Units => Object.fromEntries(UNITS.map((u) => [u, a[u] + b[u]])) as Units;
export const scaled = (a: Units, by: number): Units => Object.fromEntries(UNITS.map((u) => [u, a[u] * by])) as Units;
export const rounded = (a: Units, digits = 3): Units =>
  Object.fromEntries(UNITS.map((u) => [u, Math.round(a[u] * 10 ** digits) / 10 ** digits])) as Units;

/** Each cause's units between two readings, without the units it did not spend. */
export const kindsDelta = (after: UsageView, before: UsageView) =>
  Object.fromEntries(
    after.by_kind.map((k) => {
      const b = before.by_kind.find((x) => x.kind === k.kind);
      const d = b ? minus(k.units, b.units) : k.units;
      return [k.kind, Object.fromEntries(Object.entries(rounded(d)).filter(([, v]) => v !== 0))];
    }),
  );
