import { describe, expect, it } from "vitest";
import { capToInvocation, PASS_RESERVE_SUBREQUESTS, planCalls } from "../../src/scaleset/executor/invocation-cap";
import type { Action, Plan, PlanSummary } from "../../src/scaleset/reconcile";

const summary: PlanSummary = { desired: 0, live: 0, available: 0, idle: 0, busy: 0, creating: 0, deleting: 0, queued: 0, blocked: null };
const plan = (actions: Action[], wakeAt: number | null = null): Plan => ({ actions, wakeAt, summary });
const deletes = (n: number): Action[] => Array.from({ length: n }, (_, i) => ({ type: "delete", instance: `er-${i}`, force: false }));
const marks = (n: number): Action[] =>
  Array.from({ length: n }, (_, i) => ({ type: "mark_delete", instance: `er-${i}`, reason: "job_completed" }) as Action);

describe("capToInvocation", () => {
  it("counts two calls per create and per delete, one per poll, none for a mark", () => {
    expect(planCalls([{ type: "create", count: 10 }, ...deletes(3), ...marks(4), { type: "poll", instance: "er-x", why: "stuck" }])).toBe(
      27,
    );
  });

  it("leaves a plan the invocation can pay for as it is", () => {
    const p = plan([{ type: "create", count: 100 }, ...deletes(100)], 5);
    expect(capToInvocation(p, 10_000, 1)).toBe(p);
  });

  it("cuts a scale set of 10,000 filling up from nothing to what one invocation can send, and wakes at once for the rest", () => {
    // 20,000 calls planned: past Cloudflare's 10,000 subrequests, every call after the 10,000th would be refused.
    const p = plan([{ type: "create", count: 10_000 }]);
    const cut = capToInvocation(p, 10_000, 42);
    expect(cut.actions).toEqual([{ type: "create", count: (10_000 - PASS_RESERVE_SUBREQUESTS) / 2 }]);
    expect(planCalls(cut.actions) + PASS_RESERVE_SUBREQUESTS).toBeLessThanOrEqual(10_000);
    expect(cut.wakeAt).toBe(42);
    expect(cut.summary).toBe(p.summary);
  });

  it("keeps marks, then polls and deletes, before creates, in the planner's order", () => {
    const p = plan([...marks(3), { type: "create", count: 50 }, ...deletes(3), { type: "poll", instance: "er-p", why: "stuck" }]);
    // Room for 7 calls: the poll (1), the three deletes (6), no create.
    const cut = capToInvocation(p, PASS_RESERVE_SUBREQUESTS + 7, 0);
    expect(cut.actions).toEqual([...marks(3), ...deletes(3), { type: "poll", instance: "er-p", why: "stuck" }]);
    // Nothing left at all: only the marks (D1 writes) stay.
    expect(capToInvocation(p, 100, 0).actions).toEqual(marks(3));
  });
});
