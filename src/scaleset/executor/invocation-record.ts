import { AsyncLocalStorage } from "node:async_hooks";
import { type InvocationCost, invocationBudget, largest, measure, noCost } from "../../lib/invocation-cost";
import { recordInvocation } from "../../lib/invocation-ledger";
import { tally } from "../../lib/usage-tally";
import { logger } from "../../observability/log";
import type { InvocationCostView, InvocationsStatus } from "../object/status-types";

/**
 * What a scale set object's invocations (its alarm and each RPC: nudges, reconciles, callbacks,
 * reports) spend of Cloudflare's per-invocation budgets, kept in memory for its status. Work an
 * invocation leaves running (a pass started by a create that settled) keeps counting into it
 * after it returned, so the last few invocations stay open and are folded into `largest` only
 * when they drop off the list.
 */

/** Invocations still open to late counts. */
const RECENT = 16;
/** A share of a budget past which an invocation is logged (`invocation_cost_high`). */
const HIGH_SHARE = 0.5;

const view = (c: InvocationCost): InvocationCostView => ({
  subrequests: c.subrequests,
  fetches: c.fetches,
  d1_round_trips: c.d1RoundTrips,
  d1_queries: c.d1Queries,
});

export class InvocationRecord {
  constructor(private readonly scaleSetId: () => string | null) {}

  private count = 0;
  private settled: InvocationCost | null = null;
  private readonly recent: { method: string; cost: InvocationCost }[] = [];
  /** Invocations and held work under way; the object is billed for duration while any is. */
  private busy = 0;
  private busySince = 0;
  private busyKind = "";

  /**
   * Runs one invocation, counting what it spends. It is one billed Durable Object request
   * (each RPC call and each alarm is), tallied as its method's, as is what it spends.
   */
  async run<R>(method: string, fn: () => Promise<R>): Promise<R> {
    // A method called from inside an invocation (reconcileNow asking for the status) is part of it.
    if (inside.getStore()) return fn();
    const cost = noCost();
    this.count++;
    this.recent.push({ method, cost });
    if (this.recent.length > RECENT) this.settled = largest(this.settled, this.recent.shift()!.cost);
    tally("do_requests", method);
    recordInvocation(method, cost);
    this.enter(method);
    try {
      return await inside.run(true, () => measure(cost, fn, method));
    } finally {
      this.leave();
      const budget = invocationBudget();
      if (cost.subrequests > budget.subrequests * HIGH_SHARE || cost.d1Queries > budget.d1Queries * HIGH_SHARE) {
        logger.warn({ event: "invocation_cost_high", scale_set: this.scaleSetId(), method, ...view(cost), budget: budgetView() });
      }
    }
  }

  /**
   * Keeps the object counted as active until `work` settles: work an invocation leaves running
   * (a pass a nudge started) keeps it from hibernating, so it is billed for that time too.
   */
  hold<R>(kind: string, work: Promise<R>): Promise<R> {
    this.enter(kind);
    return work.finally(() => this.leave());
  }

  // Active time is the union of what is under way, so overlapping invocations count once.
  private enter(kind: string): void {
    if (this.busy++ === 0) {
      this.busySince = Date.now();
      this.busyKind = kind;
    }
  }

  private leave(): void {
    if (--this.busy === 0) tally("do_active_ms", this.busyKind, Date.now() - this.busySince);
  }

  status(): InvocationsStatus {
    let max = this.settled;
    for (const r of this.recent) max = largest(max, r.cost);
    const last = this.recent.at(-1);
    return {
      count: this.count,
      largest: max && view(max),
      last: last ? { method: last.method, ...view(last.cost) } : null,
      budget: budgetView(),
    };
  }
}

const inside = new AsyncLocalStorage<true>();
const budgetView = () => ({ subrequests: invocationBudget().subrequests, d1_queries: invocationBudget().d1Queries });

/**
 * Makes every listed method of a Durable Object class one measured invocation. Patched on the
 * prototype, where the runtime looks RPC methods up, so the class's methods stay plain; a call
 * made from inside an invocation (reconcileNow asking for the status) is part of that one.
 */
export function measureInvocations<T extends { readonly invocations: InvocationRecord }>(
  cls: { prototype: T },
  methods: readonly (keyof T & string)[],
): void {
  for (const name of methods) {
    const original = cls.prototype[name] as unknown as (this: T, ...args: unknown[]) => Promise<unknown>;
    (cls.prototype as Record<string, unknown>)[name] = function (this: T, ...args: unknown[]) {
      return this.invocations.run(name, () => original.apply(this, args));
    };
  }
}
