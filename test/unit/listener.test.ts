/** The scale set API listener's state machine: steps, outcomes, message plans, demand. */
import { describe, expect, it } from "vitest";
import { mergeJob } from "../../src/intake/job-merge";
import type { JobMessage, ListenerSession, QueueMessage } from "../../src/scaleset/actions-port";
import {
  afterStep,
  conclusionOf,
  INITIAL_LISTENER,
  jobStateOf,
  type ListenerState,
  listenerBackoffMs,
  listenerDemand,
  messagePlan,
  nextStep,
  nextStepAt,
} from "../../src/scaleset/listener";

const NOW = 1_800_000_000_000;
const on = { listen: true };
const off = { listen: false };
const stats = (assigned: number, running = 0) => ({
  totalAvailableJobs: 0,
  totalAcquiredJobs: assigned,
  totalAssignedJobs: assigned,
  totalRunningJobs: running,
  totalRegisteredRunners: 0,
  totalBusyRunners: running,
  totalIdleRunners: 0,
});
const session = (id = "s1", token = "t1"): ListenerSession => ({
  sessionId: id,
  messageQueueUrl: "https://q/" + id,
  messageQueueAccessToken: token,
  statistics: stats(2),
});
const listening: ListenerState = { ...INITIAL_LISTENER, githubScaleSetId: 7, session: session(), lastMessageId: 4 };
const err = (kind: "conflict" | "not_found" | "unauthorized" | "retryable" | "permanent") => ({ kind, message: kind });

describe("listener steps", () => {
  it("registers, opens a session, then polls; and holds nothing when it should not listen", () => {
    expect(nextStep(INITIAL_LISTENER, on, NOW)).toEqual({ kind: "register" });
    const registered = afterStep(INITIAL_LISTENER, { step: "register", ok: true, githubScaleSetId: 7 }, NOW);
    expect(nextStep(registered, on, NOW)).toEqual({ kind: "open_session" });
    const open = afterStep(registered, { step: "open_session", ok: true, session: session() }, NOW);
    expect(open).toMatchObject({ session: { sessionId: "s1" }, lastMessageId: 0, statistics: { totalAssignedJobs: 2 } });
    expect(nextStep(open, on, NOW)).toEqual({ kind: "poll" });
    expect(nextStepAt(open, on, NOW)).toBe(NOW);
    expect(nextStep(open, off, NOW)).toEqual({ kind: "close_session" });
    expect(nextStep(registered, off, NOW)).toEqual({ kind: "idle" });
    expect(nextStepAt(registered, off, NOW)).toBeNull();
    const closed = afterStep(open, { step: "close_session", ok: true, unregistered: false }, NOW);
    expect(closed.session).toBeNull();
    expect(closed.githubScaleSetId).toBe(7); // disabled: the scale set stays registered
  });

  it("closes the session and unregisters the runner scale set when the scale set is deleted", () => {
    const gone = { listen: false, unregister: true };
    expect(nextStep(listening, gone, NOW)).toEqual({ kind: "close_session" });
    const registeredOnly = { ...INITIAL_LISTENER, githubScaleSetId: 7 };
    expect(nextStep(registeredOnly, gone, NOW)).toEqual({ kind: "close_session" });
    const done = afterStep(listening, { step: "close_session", ok: true, unregistered: true }, NOW);
    expect(done).toMatchObject({ session: null, githubScaleSetId: null });
    expect(nextStep(done, gone, NOW)).toEqual({ kind: "idle" });
  });

  it("moves the cursor only with a handled message, and keeps it on an empty poll", () => {
    const after = afterStep(listening, { step: "poll", ok: true, handled: { messageId: 9, statistics: stats(3, 1) } }, NOW);
    expect(after).toMatchObject({ lastMessageId: 9, statistics: { totalAssignedJobs: 3 } });
    expect(afterStep(listening, { step: "poll", ok: true, handled: null }, NOW).lastMessageId).toBe(4);
  });

  it("refreshes the session when the queue token is refused, and opens a new one when the refresh is refused", () => {
    const refused = afterStep(listening, { step: "poll", ok: false, error: err("unauthorized") }, NOW);
    expect(refused).toMatchObject({ refreshNeeded: true, retryAt: null });
    expect(nextStep(refused, on, NOW)).toEqual({ kind: "refresh_session" });
    const refreshed = afterStep(refused, { step: "refresh_session", ok: true, session: session("s1", "t2") }, NOW);
    expect(refreshed).toMatchObject({ refreshNeeded: false, lastMessageId: 4, session: { messageQueueAccessToken: "t2" } });
    expect(nextStep(refreshed, on, NOW)).toEqual({ kind: "poll" });
    const dead = afterStep(refused, { step: "refresh_session", ok: false, error: err("unauthorized") }, NOW);
    expect(dead.session).toBeNull();
    // Refused again and again: the refreshes back off instead of spinning.
    let s = listening;
    for (let i = 0; i < 3; i++) {
      s = afterStep(s, { step: "poll", ok: false, error: err("unauthorized") }, NOW);
      s = afterStep(s, { step: "refresh_session", ok: true, session: session() }, NOW);
    }
    s = afterStep(s, { step: "poll", ok: false, error: err("unauthorized") }, NOW);
    expect(s.retryAt).toBeGreaterThan(NOW);
  });

  it("opens a new session when its session is gone, and registers again when the scale set is gone", () => {
    const noSession = afterStep(listening, { step: "refresh_session", ok: false, error: err("not_found") }, NOW);
    expect(noSession).toMatchObject({ session: null, githubScaleSetId: 7 });
    expect(nextStep(noSession, on, NOW)).toEqual({ kind: "open_session" });
    const noSet = afterStep(noSession, { step: "open_session", ok: false, error: err("not_found") }, NOW);
    expect(noSet).toMatchObject({ session: null, githubScaleSetId: null });
    expect(nextStep(noSet, on, NOW)).toEqual({ kind: "register" });
    // A runner group or entity GitHub does not show: backs off, never spins.
    const refused = afterStep(noSet, { step: "register", ok: false, error: err("not_found") }, NOW);
    expect(refused.retryAt).toBeGreaterThan(NOW);
    expect(nextStep(refused, on, NOW)).toMatchObject({ kind: "wait" });
  });

  it("backs off on a session conflict (at least 30 s) until the other session is gone, then takes over", () => {
    const registered = { ...INITIAL_LISTENER, githubScaleSetId: 7 };
    const c1 = afterStep(registered, { step: "open_session", ok: false, error: err("conflict") }, NOW);
    expect(c1).toMatchObject({ conflictSince: NOW, retryAt: NOW + 30_000, session: null });
    expect(nextStep(c1, on, NOW + 1_000)).toEqual({ kind: "wait", until: NOW + 30_000 });
    const c2 = afterStep(c1, { step: "open_session", ok: false, error: err("conflict") }, NOW + 30_000);
    expect(c2.conflictSince).toBe(NOW);
    expect(nextStep(c2, on, NOW + 60_000)).toEqual({ kind: "open_session" });
    const taken = afterStep(c2, { step: "open_session", ok: true, session: session("s2") }, NOW + 60_000);
    expect(taken).toMatchObject({ conflictSince: null, failures: 0, retryAt: null, session: { sessionId: "s2" } });
  });

  it("backs off retryable failures exponentially up to five minutes, and a disabled scale set waits for nothing", () => {
    expect([1, 2, 3, 4].map((f) => listenerBackoffMs(f, "retryable"))).toEqual([2_000, 4_000, 8_000, 16_000]);
    expect(listenerBackoffMs(20, "retryable")).toBe(300_000);
    const failed = afterStep(listening, { step: "poll", ok: false, error: err("retryable") }, NOW);
    expect(failed).toMatchObject({ failures: 1, retryAt: NOW + 2_000, session: { sessionId: "s1" } });
    expect(failed.lastError).toContain("retryable");
    expect(nextStep(failed, off, NOW)).toEqual({ kind: "close_session" });
  });

  it("forgets a session it cannot close after three tries", () => {
    let s = listening;
    for (let i = 0; i < 2; i++) s = afterStep(s, { step: "close_session", ok: false, error: err("retryable") }, NOW);
    expect(s.session).not.toBeNull();
    s = afterStep(s, { step: "close_session", ok: false, error: err("retryable") }, NOW);
    expect(s.session).toBeNull();
    expect(nextStep(s, off, NOW)).toEqual({ kind: "idle" });
  });
});

const item = (over: Partial<JobMessage>): JobMessage => ({
  type: "JobAssigned",
  runnerRequestId: 55,
  repository: "octo/app",
  owner: "octo",
  jobId: "guid",
  jobDisplayName: "build",
  workflowRunId: 900,
  requestLabels: ["linux-ss"],
  queueTime: NOW - 10_000,
  runnerAssignTime: null,
  finishTime: null,
  runnerId: null,
  runnerName: null,
  result: null,
  ...over,
});
const route = { entityId: "e1", scaleSetId: "s1", githubScaleSetId: 7 };

describe("listener messages", () => {
  it("acquires what is available, and turns the rest into job rows keyed per request and step", () => {
    const msg: QueueMessage = {
      messageId: 3,
      statistics: stats(1),
      jobs: [
        item({ type: "JobAvailable", runnerRequestId: 54 }),
        item({ type: "JobAvailable", runnerRequestId: 54 }),
        item({}),
        item({ type: "JobStarted", runnerId: 9, runnerName: "er-1", runnerAssignTime: NOW }),
      ],
    };
    const plan = messagePlan(msg, route);
    expect(plan.acquire).toEqual([54]);
    expect(plan.jobs.map((j) => [j.key, j.action, j.job.status])).toEqual([
      ["scaleset:7:55:JobAssigned", "queued", "queued"],
      ["scaleset:7:55:JobStarted", "in_progress", "in_progress"],
    ]);
    expect(plan.jobs[1]!.job).toMatchObject({
      id: 55,
      runId: 900,
      repository: "octo/app",
      runnerName: "er-1",
      runnerId: 9,
      startedAt: NOW,
      scaleSetId: "s1",
      entityId: "e1",
    });
  });

  it("merges queue events by the intake's forward-only rules, in any order", () => {
    const assigned = jobStateOf(item({}), route)!;
    const completed = jobStateOf(
      item({ type: "JobCompleted", result: "succeeded", runnerId: 9, runnerName: "er-1", runnerAssignTime: NOW, finishTime: NOW + 5 }),
      route,
    )!;
    expect(completed).toMatchObject({ status: "completed", conclusion: "success", completedAt: NOW + 5 });
    expect(mergeJob(mergeJob(null, completed), assigned)).toEqual(mergeJob(mergeJob(null, assigned), completed));
    expect(mergeJob(completed, assigned).status).toBe("completed");
    expect(jobStateOf(item({ type: "JobAvailable" }), route)).toBeNull();
  });

  it("maps results to the REST conclusions", () => {
    expect(["succeeded", "failed", "canceled", "Skipped", ""].map((r) => conclusionOf(r))).toEqual([
      "success",
      "failure",
      "cancelled",
      "skipped",
      null,
    ]);
  });

  it("wants runners for assigned jobs not yet running, as D1 and GitHub both count them (the planner adds min idle and caps at max)", () => {
    expect(listenerDemand(null, 4)).toBe(4);
    expect(listenerDemand(stats(5, 2), 3)).toBe(3);
    expect(listenerDemand(stats(1, 3), 2)).toBe(0);
    // A runner took its job but its JobStarted is not in yet: GitHub's count says so.
    expect(listenerDemand(stats(1, 1), 1)).toBe(0);
    // GitHub still counts a job D1 has seen start (statistics lag): D1 says so.
    expect(listenerDemand(stats(1, 0), 0)).toBe(0);
    // A runner of ours reports busy before GitHub's JobStarted reaches us: its job needs no other runner.
    expect(listenerDemand(stats(2, 0), 2, 1)).toBe(1);
    expect(listenerDemand(null, 1, 1)).toBe(0);
  });
});
