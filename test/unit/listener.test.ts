/** The scale set API listener's state machine: steps, outcomes, message plans, demand. */
import { describe, expect, it } from "vitest";
import { mergeJob } from "../../src/intake/job-merge";
import type { InvalidJobItem, JobMessage, ListenerSession, QueueMessage } from "../../src/scaleset/listener/actions-port";
import {
  afterStep,
  conclusionOf,
  DEFAULT_RUNNER_GROUP_ID,
  INITIAL_LISTENER,
  invalidJobStateOf,
  jobStateOf,
  type ListenerState,
  listenerBackoffMs,
  listenerDemand,
  MAX_PROBLEM_CHARS,
  messagePlan,
  nextStep,
  nextStepAt,
  problemText,
  runnerGroupChoice,
  UNREADABLE_MESSAGE_TRIES,
  unreadableTry,
  withListenerDefaults,
} from "../../src/scaleset/listener/listener";

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

  it("registers a repository's runner scale set in the default group without a lookup, and looks up an organization's named group", () => {
    expect(DEFAULT_RUNNER_GROUP_ID).toBe(1);
    expect(runnerGroupChoice("repository", "")).toEqual({ id: 1 });
    expect(runnerGroupChoice("repository", " Default ")).toEqual({ id: 1 });
    expect(runnerGroupChoice("repository", "builders")).toMatchObject({ refused: expect.stringContaining("no runner groups") });
    expect(runnerGroupChoice("organization", "")).toEqual({ id: 1 });
    expect(runnerGroupChoice("enterprise", "")).toEqual({ id: 1 });
    expect(runnerGroupChoice("organization", "builders")).toEqual({ lookup: "builders" });
    expect(runnerGroupChoice("enterprise", "Default")).toEqual({ lookup: "Default" });
  });

  it("leaves an unreadable message for two more polls, then acknowledges it unread and shows why", () => {
    const why = "message body is not JSON";
    const unreadable = { step: "poll" as const, ok: false as const, error: err("permanent"), unreadable: { messageId: 5 } };
    expect(UNREADABLE_MESSAGE_TRIES).toBe(3);
    expect(unreadableTry(listening, 5)).toBe(1);
    let s = afterStep(listening, unreadable, NOW);
    expect(s).toMatchObject({ unreadable: { messageId: 5, tries: 1 }, failures: 1, retryAt: NOW + 2_000, lastMessageId: 4 });
    // A network failure between tries neither counts as a try nor forgets them.
    s = afterStep(s, { step: "poll", ok: false, error: err("retryable") }, NOW);
    expect(s.unreadable).toEqual({ messageId: 5, tries: 1 });
    s = afterStep(s, unreadable, NOW);
    expect(s.unreadable).toEqual({ messageId: 5, tries: 2 });
    expect(unreadableTry(s, 5)).toBe(UNREADABLE_MESSAGE_TRIES);
    // Another message starts its own count.
    expect(unreadableTry(s, 6)).toBe(1);
    const acked = afterStep(s, { step: "poll", ok: true, handled: { messageId: 5, statistics: null, unreadable: why } }, NOW + 9);
    expect(acked).toMatchObject({
      lastMessageId: 5,
      unreadable: null,
      failures: 0,
      retryAt: null,
      unreadableMessages: 1,
      lastUnreadable: { at: NOW + 9, messageId: 5, error: expect.stringContaining(why) },
    });
    expect(acked.lastError).toContain("message 5 acknowledged unread after 3 tries: message body is not JSON");
    expect(nextStep(acked, on, NOW + 9)).toEqual({ kind: "poll" });
    // The next good poll clears the error; the count and the last one stay.
    const next = afterStep(acked, { step: "poll", ok: true, handled: { messageId: 6, statistics: null } }, NOW + 10);
    expect(next).toMatchObject({ lastError: null, unreadableMessages: 1, lastUnreadable: { messageId: 5 } });
  });

  it("counts the invalid items of handled messages, and reads a state saved before these fields existed", () => {
    const s = afterStep(listening, { step: "poll", ok: true, handled: { messageId: 5, statistics: null, invalidItems: 2 } }, NOW);
    expect(afterStep(s, { step: "poll", ok: true, handled: { messageId: 6, statistics: null } }, NOW).invalidJobItems).toBe(2);
    const { unreadable: _u, unreadableMessages: _m, lastUnreadable: _l, invalidJobItems: _i, ...old } = listening;
    expect(withListenerDefaults(old)).toEqual({
      ...listening,
      unreadable: null,
      unreadableMessages: 0,
      lastUnreadable: null,
      invalidJobItems: 0,
    });
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
      invalid: [],
      skipped: [],
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

  it("records an invalid item with a request id as an unmatched row of the scale set's entity, with its problem; acquires none", () => {
    const bad = (over: Partial<InvalidJobItem>): InvalidJobItem => ({
      ...item({}),
      type: "JobAssigned",
      problems: ["requestLabels: Too big: expected array to have <=100 items"],
      ...over,
    });
    const msg: QueueMessage = {
      messageId: 3,
      statistics: null,
      jobs: [],
      invalid: [
        bad({ type: "JobAvailable", runnerRequestId: 60 }),
        bad({ type: null, runnerRequestId: 61 }),
        bad({ type: "JobCompleted", runnerRequestId: 62, result: "failed", runnerName: "er-9", runnerId: 9, finishTime: NOW }),
        bad({ runnerRequestId: null }),
      ],
      skipped: ["SomethingNew"],
    };
    const plan = messagePlan(msg, route);
    expect(plan.acquire).toEqual([]);
    expect(plan.jobs.map((j) => [j.key, j.action, j.job.status, j.job.scaleSetId])).toEqual([
      ["scaleset:7:60:JobAvailable:invalid", "queued", "queued", null],
      ["scaleset:7:61:unknown:invalid", "queued", "queued", null],
      ["scaleset:7:62:JobCompleted:invalid", "completed", "completed", null],
    ]);
    expect(plan.jobs[2]!.job).toMatchObject({
      source: "scaleset_api",
      id: 62,
      entityId: "e1",
      repository: "octo/app",
      conclusion: "failure",
      completedAt: NOW,
      // Nothing in an invalid item links a runner.
      runnerName: null,
      runnerId: null,
      problem: "queue item failed validation: requestLabels: Too big: expected array to have <=100 items",
    });
    // A valid event later still lands (its key differs), and the row keeps its problem.
    const row = mergeJob(null, plan.jobs[1]!.job);
    const valid = jobStateOf(item({ runnerRequestId: 61 }), route)!;
    expect(mergeJob(row, valid)).toMatchObject({ scaleSetId: "s1", problem: row.problem });
    expect(invalidJobStateOf(bad({ runnerRequestId: null }), route)).toBeNull();
  });

  it("bounds a row's problem", () => {
    const long = problemText(Array.from({ length: 50 }, (_, i) => `field${i}: Too big: expected string to have <=100 characters`));
    expect(long.length).toBe(MAX_PROBLEM_CHARS);
    expect(long.endsWith("…")).toBe(true);
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
