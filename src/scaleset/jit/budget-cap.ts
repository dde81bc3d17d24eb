import { type Action, type Plan, trimCreate } from "../reconcile";

/**
 * Cuts a plan's creates to what the GitHub budget paid for this window (github/budget/budget.ts), or to
 * what on-boot pacing lets go now (create-pacing.ts).
 * Pure: the planner decides what is needed, this decides how much of it happens now. Runners
 * the budget cannot pay for get no row at all; the plan wakes at `freesAt` to create them.
 */

/** How many runners the plan creates. */
export const createCount = (actions: readonly Action[]): number =>
  actions.reduce((count, action) => count + (action.type === "create" ? action.count : 0), 0);

export function capCreates(
  p: Plan,
  granted: number,
  freesAt: number,
  why: NonNullable<Plan["summary"]["blocked"]> = "github_budget",
): Plan {
  const wanted = createCount(p.actions);
  if (granted >= wanted) return p;
  let left = Math.max(0, granted);
  const actions: Action[] = [];
  for (const action of p.actions) {
    if (action.type !== "create") actions.push(action);
    else if (left > 0) {
      const count = Math.min(action.count, left);
      left -= count;
      actions.push(trimCreate(action, count));
    }
  }
  return {
    actions,
    wakeAt: p.wakeAt === null ? freesAt : Math.min(p.wakeAt, freesAt),
    summary: { ...p.summary, blocked: p.summary.blocked ?? why },
  };
}
