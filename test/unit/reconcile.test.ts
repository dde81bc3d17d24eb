import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { jobStatuses } from "../../src/db/jobs/schema";
import { instanceStatuses, runnerStatuses } from "../../src/db/runner/schema";
import { type CreateBackoff, NO_CREATE_BACKOFF } from "../../src/scaleset/backoff";
import { type Action, type PlanConfig, type PlanInstance, type PlanSnapshot, plan } from "../../src/scaleset/reconcile";
import { planConfig, planInstance } from "./plan-fixtures";

const NOW = 1_000_000_000;
const MIN = 60_000;

const config = planConfig;

const inst = (over: Partial<PlanInstance> = {}): PlanInstance => planInstance(NOW - 10 * MIN, over);

const snap = (over: Partial<PlanSnapshot> = {}): PlanSnapshot => ({
  config: config(),
  instances: [],
  queuedJobs: 0,
  createBackoff: NO_CREATE_BACKOFF,
  now: NOW,
  ...over,
});

const creates = (actions: Action[]) => actions.filter((a) => a.type === "create").reduce((s, a) => s + (a as { count: number }).count, 0);

describe("plan: how many to create", () => {
  it.each([
    ["nothing queued, no min idle", {}, [], 0],
    ["min idle from scratch", { minIdleRunners: 2 }, [], 2],
    ["one per queued job", {}, [], 3, 3],
    ["min idle plus queued", { minIdleRunners: 1 }, [], 3, 2],
    ["capped by max_runners", { maxRunners: 4 }, [], 4, 9],
    ["idle runners already cover the jobs", {}, [inst(), inst()], 0, 2],
    [
      "starting runners count as coming",
      {},
      [inst({ status: "creating", runnerStatus: "pending", createdAt: NOW, statusChangedAt: NOW })],
      1,
      2,
    ],
    ["busy runners do not cover queued jobs", {}, [inst({ runnerStatus: "active", jobStatus: "in_progress" })], 2, 2],
    ["busy runners count toward max", { maxRunners: 3 }, [inst({ runnerStatus: "active" }), inst({ runnerStatus: "active" })], 1, 5],
    [
      "instances being deleted count toward max",
      { maxRunners: 2 },
      [inst({ status: "deleting", inFlight: true }), inst({ status: "pending_delete", retryAt: NOW + 1000 })],
      0,
      3,
    ],
    ["disabled creates nothing", { enabled: false, minIdleRunners: 2 }, [], 0, 5],
  ] as [string, Partial<PlanConfig>, PlanInstance[], number, number?][])("%s", (_, cfg, instances, expected, queued = 0) => {
    const p = plan(snap({ config: config(cfg), instances, queuedJobs: queued }));
    expect(creates(p.actions)).toBe(expected);
  });

  it("reports why it is not creating", () => {
    expect(plan(snap({ config: config({ enabled: false }), queuedJobs: 1 })).summary.blocked).toBe("disabled");
    expect(
      plan(snap({ config: config({ maxRunners: 1 }), instances: [inst({ runnerStatus: "active" })], queuedJobs: 1 })).summary.blocked,
    ).toBe("max_runners");
    const hard: CreateBackoff = { failures: 5, lastFailureAt: NOW - 1000, hardLimitedAt: NOW - 1000 };
    expect(plan(snap({ createBackoff: hard, queuedJobs: 1 })).summary.blocked).toBe("hard_limit");
  });

  it("backs off creation after failures and wakes when the backoff ends", () => {
    const backoff: CreateBackoff = { failures: 2, lastFailureAt: NOW - 5_000, hardLimitedAt: null };
    const p = plan(snap({ createBackoff: backoff, queuedJobs: 1 }));
    expect(creates(p.actions)).toBe(0);
    expect(p.summary.blocked).toBe("create_backoff");
    expect(p.wakeAt).toBe(NOW - 5_000 + 2 * 10_000);
    expect(creates(plan(snap({ createBackoff: backoff, queuedJobs: 1, now: NOW + 15_000 })).actions)).toBe(1);
  });
});

describe("plan: what to delete", () => {
  it.each([
    ["an instance in error", { status: "error" as const }, "instance_error"],
    ["a stopped instance", { status: "stopped" as const }, "instance_stopped"],
    ["a runner whose job completed", { runnerStatus: "active" as const, jobStatus: "completed" as const }, "job_completed"],
    ["a terminated runner", { runnerStatus: "terminated" as const }, "runner_finished"],
    ["a runner that failed to bootstrap", { runnerStatus: "failed" as const }, "runner_finished"],
    [
      "a runner not idle within the bootstrap timeout",
      { runnerStatus: "installing" as const, createdAt: NOW - 21 * MIN },
      "bootstrap_timeout",
    ],
    [
      "an instance still creating after the bootstrap timeout",
      { status: "creating" as const, runnerStatus: "pending" as const, createdAt: NOW - 21 * MIN, inFlight: true },
      null,
    ],
  ])("marks %s", (_, over, reason) => {
    const i = inst(over);
    const p = plan(snap({ instances: [i] }));
    const mark = p.actions.find((a) => a.type === "mark_delete");
    expect(mark ? (mark as { reason: string }).reason : null).toBe(reason);
  });

  it("keeps a runner that is still bootstrapping within its timeout and wakes at the deadline", () => {
    const i = inst({ runnerStatus: "installing", createdAt: NOW - 5 * MIN });
    const p = plan(snap({ instances: [i], queuedJobs: 1 }));
    expect(p.actions).toEqual([]);
    expect(p.wakeAt).toBe(NOW + 15 * MIN);
  });

  it("counts the bootstrap timeout of a machine that waited in line for its on-boot JIT config from its last ask or its mint", () => {
    // Created 30 minutes ago (past the 20-minute timeout), asked for its JIT 5 minutes ago: kept.
    const waiting = inst({ status: "running", runnerStatus: "pending", createdAt: NOW - 30 * MIN, bootstrapSince: NOW - 5 * MIN });
    const p = plan(snap({ instances: [waiting], queuedJobs: 1 }));
    expect(p.actions).toEqual([]);
    expect(p.wakeAt).toBe(NOW + 15 * MIN);
    // Its last ask (or mint) a whole timeout ago: reaped.
    const gone = inst({ status: "running", runnerStatus: "pending", createdAt: NOW - 60 * MIN, bootstrapSince: NOW - 20 * MIN });
    expect(plan(snap({ instances: [gone], queuedJobs: 1 })).actions).toContainEqual({
      type: "mark_delete",
      instance: gone.name,
      reason: "bootstrap_timeout",
    });
    // Never earlier than its create.
    const early = inst({ status: "running", runnerStatus: "pending", createdAt: NOW - 21 * MIN, bootstrapSince: NOW - 40 * MIN });
    expect(plan(snap({ instances: [early], queuedJobs: 1 })).actions).toContainEqual({
      type: "mark_delete",
      instance: early.name,
      reason: "bootstrap_timeout",
    });
  });

  it("deletes pending deletes whose backoff has passed, force deletes too, and waits for the others", () => {
    const due = inst({ status: "pending_delete", retryAt: NOW - 1 });
    const forced = inst({ status: "pending_force_delete" });
    const later = inst({ status: "pending_delete", retryAt: NOW + 4_000 });
    const p = plan(snap({ instances: [due, forced, later] }));
    expect(p.actions).toEqual([
      { type: "delete", instance: due.name, force: false },
      { type: "delete", instance: forced.name, force: true },
    ]);
    expect(p.wakeAt).toBe(NOW + 4_000);
  });

  it("scales idle surplus down oldest first, only after the minimum idle time", () => {
    const old = inst({ createdAt: NOW - 60 * MIN, idleSince: NOW - 30 * MIN });
    const mid = inst({ createdAt: NOW - 40 * MIN, idleSince: NOW - 30 * MIN });
    const fresh = inst({ createdAt: NOW - 50 * MIN, idleSince: NOW - 1 * MIN });
    const p = plan(snap({ config: config({ minIdleRunners: 1 }), instances: [mid, fresh, old] }));
    expect(p.actions).toEqual([
      { type: "mark_delete", instance: old.name, reason: "scale_down" },
      { type: "mark_delete", instance: mid.name, reason: "scale_down" },
    ]);
    const p2 = plan(snap({ config: config({ minIdleRunners: 2 }), instances: [fresh, mid] }));
    expect(p2.actions).toEqual([]);
    // Only one surplus and the only removable one has not idled long enough: wait for it.
    const p3 = plan(
      snap({ config: config({ minIdleRunners: 1 }), instances: [fresh, inst({ runnerStatus: "installing", createdAt: NOW })] }),
    );
    expect(p3.actions).toEqual([]);
    expect(p3.wakeAt).toBe(NOW + 4 * MIN);
  });

  it("never scales down busy or bootstrapping runners", () => {
    const busy = inst({ runnerStatus: "active", jobStatus: "in_progress" });
    const booting = inst({ runnerStatus: "installing", createdAt: NOW - MIN });
    const p = plan(snap({ instances: [busy, booting] }));
    expect(p.actions).toEqual([]);
  });

  it("keeps cleaning up while disabled", () => {
    const done = inst({ jobStatus: "completed", runnerStatus: "active" });
    const p = plan(snap({ config: config({ enabled: false }), instances: [done, inst({ status: "pending_delete" })] }));
    expect(p.actions.map((a) => a.type).sort()).toEqual(["delete", "mark_delete"]);
  });
});

describe("plan: operations and stuck rows", () => {
  it("polls an async operation with no callback in time, and waits before that", () => {
    const waiting = inst({ status: "creating", runnerStatus: "pending", awaiting: { kind: "create", pollAt: NOW + 30_000 } });
    expect(plan(snap({ instances: [waiting] })).wakeAt).toBe(NOW + 30_000);
    const overdue = { ...waiting, awaiting: { kind: "create" as const, pollAt: NOW - 1 } };
    expect(plan(snap({ instances: [overdue] })).actions).toEqual([{ type: "poll", instance: waiting.name, why: "operation_timeout" }]);
  });

  it("asks the shim at once about rows left mid-way by an earlier incarnation of the object", () => {
    const leftover = inst({ status: "pending_create", runnerStatus: "pending", statusChangedAt: NOW - 10_000, createdAt: NOW - 10_000 });
    const ours = inst({ status: "creating", runnerStatus: "pending", statusChangedAt: NOW - 1_000, createdAt: NOW - 1_000 });
    const p = plan(snap({ config: config({ startedAt: NOW - 5_000 }), instances: [leftover, ours] }));
    expect(p.actions.filter((a) => a.type === "poll")).toEqual([{ type: "poll", instance: leftover.name, why: "stuck" }]);
    expect(p.wakeAt).toBe(NOW - 1_000 + 2 * MIN);
  });

  it("asks the shim about rows left creating or deleting by a crash, after a grace period", () => {
    const stuck = inst({ status: "deleting", statusChangedAt: NOW - 3 * MIN });
    const recent = inst({ status: "creating", runnerStatus: "pending", statusChangedAt: NOW - MIN, createdAt: NOW - MIN });
    const ours = inst({ status: "creating", runnerStatus: "pending", statusChangedAt: NOW - 3 * MIN, inFlight: true });
    const p = plan(snap({ instances: [stuck, recent, ours] }));
    expect(p.actions.filter((a) => a.type === "poll")).toEqual([{ type: "poll", instance: stuck.name, why: "stuck" }]);
  });
});

// ---- properties -------------------------------------------------------------------------

const arbInstance: fc.Arbitrary<PlanInstance> = fc.record({
  name: fc.uuid(),
  status: fc.constantFrom(...instanceStatuses),
  runnerStatus: fc.constantFrom(...runnerStatuses),
  createdAt: fc.integer({ min: NOW - 120 * MIN, max: NOW }),
  statusChangedAt: fc.integer({ min: NOW - 120 * MIN, max: NOW }),
  idleSince: fc.option(fc.integer({ min: NOW - 120 * MIN, max: NOW })),
  jobStatus: fc.option(fc.constantFrom(...jobStatuses)),
  retryAt: fc.option(fc.integer({ min: NOW - MIN, max: NOW + MIN })),
  inFlight: fc.boolean(),
  awaiting: fc.option(
    fc.record({ kind: fc.constantFrom("create" as const, "delete" as const), pollAt: fc.integer({ min: NOW - MIN, max: NOW + MIN }) }),
  ),
});

const arbSnapshot: fc.Arbitrary<PlanSnapshot> = fc.record({
  config: fc.record({
    enabled: fc.boolean(),
    minIdleRunners: fc.integer({ min: 0, max: 5 }),
    maxRunners: fc.integer({ min: 1, max: 12 }),
    bootstrapTimeoutMs: fc.integer({ min: MIN, max: 30 * MIN }),
    scaleDownIdleMs: fc.integer({ min: 0, max: 10 * MIN }),
    operationPollMs: fc.constant(2 * MIN),
    stuckGraceMs: fc.constant(2 * MIN),
    createBackoff: fc.constant({ intervalMs: 10_000, hardLimit: 5 }),
  }),
  instances: fc.uniqueArray(arbInstance, { maxLength: 15, selector: (i) => i.name }),
  queuedJobs: fc.integer({ min: 0, max: 20 }),
  createBackoff: fc.oneof(
    fc.constant(NO_CREATE_BACKOFF),
    fc.record({
      failures: fc.integer({ min: 1, max: 6 }),
      lastFailureAt: fc.integer({ min: NOW - MIN, max: NOW }),
      hardLimitedAt: fc.option(fc.constant(NOW)),
    }),
  ),
  now: fc.constant(NOW),
});

describe("plan: properties", () => {
  it("never plans more live instances than max_runners", () => {
    fc.assert(
      fc.property(arbSnapshot, (s) => {
        const live = s.instances.filter((i) => i.status !== "deleted").length;
        const created = creates(plan(s).actions);
        expect(live + created <= Math.max(live, s.config.maxRunners)).toBe(true);
      }),
      { numRuns: 2000 },
    );
  });

  it("creates nothing while disabled or at the hard limit", () => {
    fc.assert(
      fc.property(arbSnapshot, (s) => {
        const blocked = !s.config.enabled || s.createBackoff.hardLimitedAt !== null;
        if (blocked) expect(creates(plan(s).actions)).toBe(0);
      }),
      { numRuns: 2000 },
    );
  });

  it("never acts twice on one instance, and never on one with an operation in flight", () => {
    fc.assert(
      fc.property(arbSnapshot, (s) => {
        const named = plan(s).actions.filter((a): a is Action & { instance: string } => "instance" in a);
        expect(new Set(named.map((a) => a.instance)).size).toBe(named.length);
        const inFlight = new Set(s.instances.filter((i) => i.inFlight).map((i) => i.name));
        for (const a of named) expect(inFlight.has(a.instance)).toBe(false);
        for (const a of named) expect(s.instances.find((i) => i.name === a.instance)!.status).not.toBe("deleted");
      }),
      { numRuns: 2000 },
    );
  });

  it("wakes only in the future", () => {
    fc.assert(
      fc.property(arbSnapshot, (s) => {
        const { wakeAt } = plan(s);
        if (wakeAt !== null) expect(wakeAt).toBeGreaterThan(s.now);
      }),
    );
  });

  it("converges to the desired count when shims and runners behave", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 5 }),
        fc.integer({ min: 1, max: 15 }),
        fc.integer({ min: 0, max: 25 }),
        fc.integer({ min: 0, max: 12 }),
        (minIdle, max, queued, existingIdle) => {
          fc.pre(minIdle <= max);
          const cfg = config({ minIdleRunners: minIdle, maxRunners: max, scaleDownIdleMs: 0 });
          let world: PlanInstance[] = Array.from({ length: Math.min(existingIdle, max) }, () => inst());
          for (let round = 0; round < 6; round++) {
            const p = plan(snap({ config: cfg, instances: world, queuedJobs: queued }));
            for (const a of p.actions) {
              if (a.type === "create") for (let k = 0; k < a.count; k++) world.push(inst({ createdAt: NOW, idleSince: NOW }));
              if (a.type === "mark_delete") world = world.map((i) => (i.name === a.instance ? { ...i, status: "pending_delete" } : i));
              if (a.type === "delete") world = world.filter((i) => i.name !== a.instance);
            }
          }
          const desired = Math.min(max, minIdle + queued);
          expect(world.length).toBe(desired);
          expect(plan(snap({ config: cfg, instances: world, queuedJobs: queued })).actions).toEqual([]);
        },
      ),
    );
  });

  it("creates N runners for a burst of N jobs however often it is planned while they start", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 50 }), fc.integer({ min: 1, max: 5 }), (burst, replans) => {
        const cfg = config({ maxRunners: 100 });
        const world: PlanInstance[] = [];
        for (let r = 0; r < replans; r++) {
          for (const a of plan(snap({ config: cfg, instances: world, queuedJobs: burst })).actions) {
            if (a.type === "create")
              for (let k = 0; k < a.count; k++)
                world.push(
                  inst({ status: "pending_create", runnerStatus: "pending", createdAt: NOW, statusChangedAt: NOW, inFlight: true }),
                );
          }
        }
        expect(world.length).toBe(burst);
      }),
    );
  });
});
