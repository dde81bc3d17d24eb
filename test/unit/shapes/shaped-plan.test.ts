import { describe, expect, it } from "vitest";
import { NO_CREATE_BACKOFF } from "../../../src/scaleset/backoff";
import { type Action, type PlanInstance, type PlanSnapshot, plan, trimCreate } from "../../../src/scaleset/reconcile";
import { planConfig, planInstance } from "../plan-fixtures";

const NOW = 1_000_000_000;
const MIN = 60_000;

// A shaped scale set's machines are its jobs' (src/shapes): the planner counts them per shape.
const machine = (shape: string, over: Partial<PlanInstance> = {}): PlanInstance => planInstance(NOW - 10 * MIN, { shape, ...over });
const snap = (queuedShapes: string[], instances: PlanInstance[], over: Partial<PlanSnapshot["config"]> = {}): PlanSnapshot => ({
  config: planConfig({ shaped: true, minIdleRunners: 0, ...over }),
  instances,
  queuedJobs: queuedShapes.length,
  queuedShapes,
  createBackoff: NO_CREATE_BACKOFF,
  now: NOW,
});
const createsFor = (actions: Action[]) => actions.flatMap((a) => (a.type === "create" ? (a.forQueued ?? []) : []));
const marked = (actions: Action[]) => actions.filter((a) => a.type === "mark_delete").map((a) => (a as { instance: string }).instance);

describe("plan: a shaped scale set", () => {
  it("makes one machine per queued job, naming the job each is for", () => {
    const p = plan(snap(["a", "b", "a"], []));
    expect(createsFor(p.actions)).toEqual([0, 1, 2]);
    expect(p.summary.desired).toBe(3);
  });

  it("counts a machine only toward jobs of its own shape", () => {
    // An idle `a` runner covers the first `a` job; the `b` job still needs its own, the second `a` too.
    const p = plan(snap(["a", "b", "a"], [machine("a", { name: "m-a" })]));
    expect(createsFor(p.actions)).toEqual([1, 2]);
    expect(marked(p.actions)).toEqual([]);
  });

  it("sends away at once an idle runner whose shape no queued job wants, even while other shapes need machines", () => {
    const p = plan(snap(["b"], [machine("a", { name: "m-a", idleSince: NOW - 1000 })]));
    expect(createsFor(p.actions)).toEqual([0]);
    expect(marked(p.actions)).toEqual(["m-a"]);
  });

  it("keeps a booting runner of a shape no job wants until it is idle (its create cannot be taken back)", () => {
    const booting = machine("a", { name: "m-a", status: "creating", runnerStatus: "pending", createdAt: NOW, statusChangedAt: NOW });
    expect(marked(plan(snap([], [booting])).actions)).toEqual([]);
  });

  it("keeps no idle runners, whatever min idle says", () => {
    expect(plan(snap([], [], { minIdleRunners: 3 })).actions).toEqual([]);
  });

  it("stays within max_runners, the oldest jobs first", () => {
    const p = plan(snap(["a", "b", "c"], [machine("x", { runnerStatus: "active", jobStatus: "in_progress" })], { maxRunners: 3 }));
    expect(createsFor(p.actions)).toEqual([0, 1]);
  });

  it("a busy runner covers no queued job", () => {
    const p = plan(snap(["a"], [machine("a", { runnerStatus: "active", jobStatus: "in_progress" })]));
    expect(createsFor(p.actions)).toEqual([0]);
  });

  it("disabled: nothing made, every idle runner surplus", () => {
    const p = plan(snap(["a", "a"], [machine("a", { name: "m-a" })], { enabled: false }));
    expect(createsFor(p.actions)).toEqual([]);
    expect(marked(p.actions)).toEqual(["m-a"]);
    expect(p.summary.blocked).toBe("disabled");
  });

  it("a create cut short keeps the jobs of the machines it still makes", () => {
    expect(trimCreate({ type: "create", count: 3, forQueued: [4, 7, 9] }, 2)).toEqual({ type: "create", count: 2, forQueued: [4, 7] });
    expect(trimCreate({ type: "create", count: 3 }, 1)).toEqual({ type: "create", count: 1 });
  });
});
