import { invocationBudget, invocationSpent } from "../../lib/invocation-cost";
import { logEvent as log } from "../../observability/log";
import { type Action, type Plan, trimCreate } from "../reconcile";

/**
 * Cuts a plan to what the invocation under way can still pay for in subrequests (Cloudflare's
 * 10,000 per invocation on Workers Paid, 50 on the Free plan: lib/invocation-cost.ts). A pass makes outbound calls in proportion to
 * its actions: a scale set of 10,000 filling up from nothing (no GitHub budget binds a
 * registration-token or scale set API scale set) would plan 10,000 creates, 20,000 fetches, and
 * the platform would refuse every call past the 10,000th. Pure: the planner decides what is
 * needed, this decides how much of it this invocation does; the rest is left to the next one (the
 * plan wakes at once, and the alarm is a new invocation).
 */

/** The most outbound calls one action makes: a JIT config and a create; a delete at the shim and at GitHub; a poll. */
export const CALLS_PER_ACTION: Record<Action["type"], number> = { create: 2, delete: 2, poll: 1, mark_delete: 0 };

/**
 * Kept back from the budget for what a pass does besides its actions: its D1 batches, a drift
 * check's lists, stale-job checks, token refreshes, retries, the runs' later passes (on Workers
 * Paid; the Free plan's is in lib/invocation-cost.ts PLAN_BUDGETS).
 */
export const PASS_RESERVE_SUBREQUESTS = 2_000;

/** How many outbound calls the plan's actions make at most. */
export const planCalls = (actions: readonly Action[]): number =>
  actions.reduce((n, a) => n + CALLS_PER_ACTION[a.type] * (a.type === "create" ? a.count : 1), 0);

/**
 * `left`: subrequests the invocation has left. Marks (D1 only) always stay; polls, deletes and
 * creates are kept in that order (finishing and freeing machines before making new ones) while
 * they fit in `left` less the reserve.
 */
export function capToInvocation(p: Plan, left: number, now: number, reserve = PASS_RESERVE_SUBREQUESTS): Plan {
  let room = left - reserve;
  if (planCalls(p.actions) <= room) return p;
  const order: Action["type"][] = ["mark_delete", "poll", "delete", "create"];
  const keep = new Set<Action>();
  let creates = 0;
  for (const type of order) {
    for (const a of p.actions) {
      if (a.type !== type) continue;
      const each = CALLS_PER_ACTION[a.type];
      if (a.type === "create") {
        const n = Math.min(a.count, Math.max(0, Math.floor(room / each)));
        creates += n;
        room -= n * each;
      } else if (each === 0 || each <= room) {
        keep.add(a);
        room -= each;
      }
    }
  }
  // In the planner's order (marks before the deletes they lead to).
  const actions: Action[] = [];
  for (const a of p.actions) {
    if (a.type !== "create") {
      if (keep.has(a)) actions.push(a);
      continue;
    }
    const n = Math.min(a.count, creates);
    if (n > 0) actions.push(trimCreate(a, n));
    creates -= n;
  }
  return { ...p, actions, wakeAt: now };
}

/** capToInvocation for the invocation under way, logging `invocation_budget_split` when it cuts. */
export function fitToInvocation(p: Plan, scaleSetId: string, now: number): Plan {
  const budget = invocationBudget();
  const left = budget.subrequests - (invocationSpent()?.subrequests ?? 0);
  const fitted = capToInvocation(p, left, now, budget.passReserveSubrequests);
  if (fitted !== p) {
    log({
      event: "invocation_budget_split",
      scale_set: scaleSetId,
      planned_calls: planCalls(p.actions),
      kept_calls: planCalls(fitted.actions),
      left,
    });
  }
  return fitted;
}
