import { describe, expect, it } from "vitest";
import { NO_CREATE_BACKOFF } from "../../src/scaleset/backoff";
import {
  type LifetimeFacts,
  type LifetimePolicy,
  lifetimePolicy,
  overstay,
  overstayDeadline,
  overstayReason,
} from "../../src/scaleset/guards/lifetime-watchdog";
import { type Action, type PlanConfig, type PlanInstance, plan } from "../../src/scaleset/reconcile";
import { planConfig, planInstance } from "./plan-fixtures";

const NOW = 2_000_000_000_000;
const HOUR = 3_600_000;
const DAY = 24 * HOUR;

const policy = (maxLifetimeSeconds: number, hardCapSeconds: number | null = null): LifetimePolicy =>
  lifetimePolicy(maxLifetimeSeconds, hardCapSeconds);

const facts = (over: Partial<LifetimeFacts> = {}): LifetimeFacts => ({
  status: "running",
  runnerStatus: "idle",
  createdAt: NOW - 25 * HOUR,
  onJob: false,
  hadJob: false,
  ...over,
});

describe("lifetime watchdog: the rule", () => {
  it("reaps an idle runner that overstayed the lifetime, saying it never picked up a job", () => {
    expect(overstay(facts(), policy(86_400), NOW)).toEqual({ reason: "never_picked_up_job", ageMs: 25 * HOUR, force: false });
  });

  it("keeps a machine younger than the lifetime, to the millisecond", () => {
    expect(overstay(facts({ createdAt: NOW - DAY + 1 }), policy(86_400), NOW)).toBeNull();
    expect(overstay(facts({ createdAt: NOW - DAY }), policy(86_400), NOW)).not.toBeNull();
  });

  it("never reaps a runner on its job without a hard cap, however old", () => {
    const onJob = facts({ runnerStatus: "active", onJob: true, createdAt: NOW - 30 * DAY });
    expect(overstay(onJob, policy(3_600), NOW)).toBeNull();
    expect(overstayDeadline(onJob, policy(3_600))).toBeNull();
  });

  it("reaps a runner on its job past the hard cap, forced", () => {
    const onJob = facts({ runnerStatus: "active", onJob: true, createdAt: NOW - 49 * HOUR });
    expect(overstay(onJob, policy(86_400, 48 * 3_600), NOW)).toEqual({ reason: "hard_cap", ageMs: 49 * HOUR, force: true });
    // Under the cap, the job goes on.
    expect(overstay({ ...onJob, createdAt: NOW - 47 * HOUR }, policy(86_400, 48 * 3_600), NOW)).toBeNull();
    expect(overstayDeadline(onJob, policy(86_400, 48 * 3_600))).toBe(NOW - 49 * HOUR + 48 * HOUR);
  });

  it("0 is never: nothing is reaped for its age, unless a hard cap is set", () => {
    const ancient = facts({ createdAt: NOW - 365 * DAY });
    expect(lifetimePolicy(0, null)).toEqual({ maxLifetimeMs: null, hardCapMs: null });
    expect(overstay(ancient, policy(0), NOW)).toBeNull();
    expect(overstayDeadline(ancient, policy(0))).toBeNull();
    // The hard cap stands on its own, for idle runners and runners on a job alike.
    expect(overstay(ancient, policy(0, 3_600), NOW)).toMatchObject({ reason: "never_picked_up_job", force: false });
    expect(overstay({ ...ancient, onJob: true }, policy(0, 3_600), NOW)).toMatchObject({ reason: "hard_cap", force: true });
  });

  it("classifies why a machine overstayed from its instance row", () => {
    const reason = (over: Partial<LifetimeFacts>) => overstayReason({ ...facts(), ...over });
    expect(reason({ hadJob: true, runnerStatus: "idle" })).toBe("stuck_after_job");
    expect(reason({ hadJob: true, runnerStatus: "offline" })).toBe("stuck_after_job");
    expect(reason({ runnerStatus: "idle" })).toBe("never_picked_up_job");
    expect(reason({ runnerStatus: "online" })).toBe("never_picked_up_job");
    expect(reason({ runnerStatus: "pending" })).toBe("never_bootstrapped");
    expect(reason({ runnerStatus: "installing" })).toBe("never_bootstrapped");
    expect(reason({ status: "creating", runnerStatus: "pending" })).toBe("never_bootstrapped");
    // Unknown to the provider (unlisted), or a runner nobody can reach: a leak.
    expect(reason({ status: "unknown", runnerStatus: "idle" })).toBe("leak");
    expect(reason({ status: "unknown", hadJob: true })).toBe("leak");
    expect(reason({ runnerStatus: "offline" })).toBe("leak");
    expect(reason({ runnerStatus: "unknown" })).toBe("leak");
    expect(reason({ onJob: true, runnerStatus: "active" })).toBe("hard_cap");
  });

  it("tells the planner when a machine will overstay", () => {
    expect(overstayDeadline(facts({ createdAt: NOW }), policy(86_400))).toBe(NOW + DAY);
    // The earlier of the two applies to a runner that is not on a job.
    expect(overstayDeadline(facts({ createdAt: NOW }), policy(86_400, 86_400))).toBe(NOW + DAY);
  });
});

// The planner turns a verdict into an ordinary mark_delete through the instance state machine.
const config = (over: Partial<PlanConfig> = {}): PlanConfig => planConfig({ lifetime: policy(86_400), ...over });

const inst = (over: Partial<PlanInstance> = {}): PlanInstance => planInstance(NOW - 25 * HOUR, { idleSince: NOW - 60_000, ...over });

const run = (cfg: Partial<PlanConfig>, instances: PlanInstance[], queuedJobs = 0) =>
  plan({ config: config(cfg), instances, queuedJobs, createBackoff: NO_CREATE_BACKOFF, now: NOW });
const marks = (actions: Action[]) => actions.filter((a) => a.type === "mark_delete");

describe("lifetime watchdog: in the planner", () => {
  it("marks an overstaying idle runner for deletion and replaces it when min idle wants one", () => {
    const old = inst();
    const p = run({ minIdleRunners: 1 }, [old]);
    expect(marks(p.actions)).toEqual([
      {
        type: "mark_delete",
        instance: old.name,
        reason: "max_lifetime",
        reap: { reason: "never_picked_up_job", ageMs: 25 * HOUR, force: false },
      },
    ]);
    expect(p.actions).toContainEqual({ type: "create", count: 1 });
  });

  it("never marks a runner on its job without a hard cap; with one, marks it forced", () => {
    const busy = inst({ runnerStatus: "active", jobStatus: "in_progress", idleSince: null, createdAt: NOW - 10 * DAY, hadJob: true });
    expect(marks(run({}, [busy]).actions)).toEqual([]);
    expect(marks(run({ lifetime: policy(86_400, 5 * 86_400) }, [busy]).actions)).toEqual([
      { type: "mark_delete", instance: busy.name, reason: "max_lifetime", reap: { reason: "hard_cap", ageMs: 10 * DAY, force: true } },
    ]);
  });

  it("leaves a scale set without a lifetime policy (or with 0) alone", () => {
    expect(marks(run({ lifetime: undefined }, [inst({ createdAt: NOW - 100 * DAY })]).actions)).toEqual([]);
    expect(marks(run({ lifetime: policy(0) }, [inst({ createdAt: NOW - 100 * DAY })]).actions)).toEqual([]);
  });

  it("lets the other reasons speak first, and leaves instances already going or in flight alone", () => {
    const done = inst({ jobStatus: "completed", hadJob: true });
    expect(marks(run({}, [done]).actions)).toEqual([{ type: "mark_delete", instance: done.name, reason: "job_completed" }]);
    const going = inst({ status: "pending_delete", retryAt: NOW + 1_000 });
    const inFlight = inst({ inFlight: true });
    expect(marks(run({}, [going, inFlight]).actions)).toEqual([]);
  });

  it("says a runner whose job ended long ago without news is stuck after its job", () => {
    const stuck = inst({ runnerStatus: "offline", idleSince: null, hadJob: true, jobStatus: null });
    expect(marks(run({}, [stuck]).actions)[0]).toMatchObject({ reap: { reason: "stuck_after_job" } });
  });

  it("wakes when the next machine will overstay", () => {
    const young = inst({ createdAt: NOW - 23 * HOUR, idleSince: NOW });
    expect(run({ minIdleRunners: 1 }, [young]).wakeAt).toBe(NOW + HOUR);
  });
});
