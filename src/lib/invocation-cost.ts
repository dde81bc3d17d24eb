import { AsyncLocalStorage } from "node:async_hooks";
import { CLOUDFLARE_PRICES } from "../usage/price-table.ts";
import { type TallyUnit, tally, UNATTRIBUTED } from "./usage-tally";

/**
 * What one invocation spends of Cloudflare's per-invocation budgets, counted where it is spent.
 * An invocation is one Worker request, or one alarm or request (RPC) of a Durable Object. On the
 * paid plan it may make 10,000 subrequests (every outbound fetch and every call to a binding
 * such as D1), run 1,000 D1 queries (each statement of a batch is one) and use 30 s of CPU.
 *
 * Counting rides on AsyncLocalStorage rather than on a counter passed down every call: the
 * GitHub and shim clients are shared by every scale set object in an isolate (they cache tokens
 * and credentials), so the fetch they make belongs to whichever invocation awaited it, and only
 * the async context knows which one that is. `measure` scopes nest: a reconcile pass counts
 * into its own cost and into its invocation's at once. Outside any scope nothing is counted.
 */

/** The Workers plan the coordinator runs on (`CLOUDFLARE_PLAN`): its per-invocation budgets differ 200-fold. */
export type CloudflarePlan = "paid" | "free";

export interface PlanBudget {
  subrequests: number;
  d1Queries: number;
  cpuMs: number;
  /** Subrequests a pass keeps back from its actions for everything else it does (executor/invocation-cap.ts). */
  passReserveSubrequests: number;
  /** D1 queries past which a counters flush does not take its invocation (observability/op-counters.ts). */
  countersQueryCeiling: number;
  /** Reconcile passes one run makes before it leaves the rest to the next alarm (a new invocation). */
  passesPerRun: number;
}

/**
 * Cloudflare's per-invocation budgets (src/usage/price-table.ts) and the shares the coordinator
 * keeps back on each plan. The Free plan's 50 subrequests and 50 D1 queries hold one pass of a
 * small scale set's work: a run makes one pass per invocation there, and a pass creates what fits
 * after a reserve sized by the test that walks a small installation's flows
 * (test/worker/free-plan-invocations.test.ts).
 */
export const PLAN_BUDGETS: Record<CloudflarePlan, PlanBudget> = {
  paid: {
    ...CLOUDFLARE_PRICES.paid.perInvocation,
    passReserveSubrequests: 2_000,
    countersQueryCeiling: 500,
    passesPerRun: 4,
  },
  free: {
    ...CLOUDFLARE_PRICES.free.perInvocation,
    passReserveSubrequests: 20,
    countersQueryCeiling: 40,
    passesPerRun: 1,
  },
};

let plan: CloudflarePlan = "paid";

/**
 * Sets the plan this isolate's budgets follow, from `CLOUDFLARE_PLAN` ("free" or "paid"; unset
 * leaves it as it is, paid unless set). The plan is the account's, the same for every request
 * and object of the deployment, so it is kept once per isolate rather than passed down.
 */
export function usePlan(value: string | undefined): void {
  if (value === "free" || value === "paid") plan = value;
}

/** The budgets of the plan in force. */
export const invocationBudget = (): PlanBudget => PLAN_BUDGETS[plan];

export interface InvocationCost {
  /** Outbound fetches plus D1 round trips: Cloudflare's subrequests. */
  subrequests: number;
  /** Outbound fetches (GitHub, the Actions service, shims). */
  fetches: number;
  /** Calls to D1 (a batch is one). */
  d1RoundTrips: number;
  /** Statements those calls carried (Cloudflare's D1 queries). */
  d1Queries: number;
}

export const noCost = (): InvocationCost => ({ subrequests: 0, fetches: 0, d1RoundTrips: 0, d1Queries: 0 });

interface Scope {
  cost: InvocationCost;
  parent: Scope | undefined;
  /** What caused the work under this scope, for the usage tally (lib/usage-tally.ts); inherited when absent. */
  kind: string | undefined;
}

const scopes = new AsyncLocalStorage<Scope>();

/** Runs `fn` so that everything it spends, however deep and however late, is added to `cost` (and to any enclosing scope's). */
export function measure<R>(cost: InvocationCost, fn: () => R, kind?: string): R {
  return scopes.run({ cost, parent: scopes.getStore(), kind }, fn);
}

/** Runs `fn` so that what it spends is tallied as `kind`'s (a listener poll inside an alarm), counting into the enclosing scopes as before. */
export function asKind<R>(kind: string, fn: () => R): R {
  return measure(noCost(), fn, kind);
}

/** What caused the work under way: the innermost scope that names it; null outside any scope (nothing is tallied there). */
export function currentKind(): string | null {
  let outer: Scope | undefined;
  for (let s = scopes.getStore(); s; s = s.parent) {
    if (s.kind !== undefined) return s.kind;
    outer = s;
  }
  return outer ? UNATTRIBUTED : null;
}

/** Tallies `by` of `unit` for the work under way (lib/usage-tally.ts); nothing outside a scope. */
export function tallyHere(unit: TallyUnit, by = 1): void {
  const kind = currentKind();
  if (kind !== null) tally(unit, kind, by);
}

function add(f: (cost: InvocationCost) => void): void {
  for (let s = scopes.getStore(); s; s = s.parent) f(s.cost);
}

/** What the invocation under way (the outermost scope) has spent so far, or null outside one. */
export function invocationSpent(): InvocationCost | null {
  let s = scopes.getStore();
  while (s?.parent) s = s.parent;
  return s?.cost ?? null;
}

/** One outbound fetch. */
export function countFetch(): void {
  tallyHere("subrequests");
  add((c) => {
    c.fetches++;
    c.subrequests++;
  });
}

/**
 * A Durable Object stub whose every method call counts as one subrequest: a call to another
 * Cloudflare service, which Cloudflare's per-invocation limit may count, so the figures the
 * Free plan is judged by count it too.
 */
export function countedStub<T extends object>(stub: T): T {
  return new Proxy(stub, {
    get(target, prop, receiver) {
      const v = Reflect.get(target, prop, receiver);
      if (typeof v !== "function" || typeof prop !== "string") return v;
      return (...args: unknown[]) => {
        tallyHere("subrequests");
        add((c) => c.subrequests++);
        // Reflect.apply: an RPC stub would take `.apply` for a method of the object.
        return Reflect.apply(v as (...a: unknown[]) => unknown, target, args);
      };
    },
  });
}

/** One D1 round trip carrying `statements` queries. */
export function countD1(statements: number): void {
  tallyHere("subrequests");
  add((c) => {
    c.d1RoundTrips++;
    c.d1Queries += statements;
    c.subrequests++;
  });
}

/** The global fetch, counted: the default of every client that calls out (GitHub, Actions service, shims, the object's limiter). */
export const measuredFetch: typeof fetch = (input, init) => {
  countFetch();
  return fetch(input, init);
};

/** Whether a cost is within every budget (CPU when given). */
export function withinBudget(cost: InvocationCost, cpuMs?: number): boolean {
  const budget = invocationBudget();
  return cost.subrequests <= budget.subrequests && cost.d1Queries <= budget.d1Queries && (cpuMs === undefined || cpuMs <= budget.cpuMs);
}

/** The larger of two costs, field by field (the most each budget was ever drawn on, not one invocation's). */
export function largest(a: InvocationCost | null, b: InvocationCost): InvocationCost {
  if (!a) return { ...b };
  return {
    subrequests: Math.max(a.subrequests, b.subrequests),
    fetches: Math.max(a.fetches, b.fetches),
    d1RoundTrips: Math.max(a.d1RoundTrips, b.d1RoundTrips),
    d1Queries: Math.max(a.d1Queries, b.d1Queries),
  };
}
