/**
 * The runner scale set API listener's decisions, as a pure state machine over plain data: what
 * to do next (`nextStep`), how an outcome changes the state (`afterStep`), which runner group to
 * register in (`runnerGroupChoice`), what a queue message asks of us (`messagePlan`, invalid
 * items included), when an unreadable message is given up (`unreadableTry`) and how many runners
 * the statistics want (`listenerDemand`). The ScaleSet object keeps the state in its SQLite and
 * carries the steps out (listener-driver.ts).
 */

import type { JobStatus } from "../../db/jobs/schema";
import type { ScaleSetRecord } from "../../db/scaleset/snapshot-store";
import type { JobState } from "../../intake/job-merge";
import type { ActionsError, InvalidJobItem, JobMessage, ListenerSession, QueueMessage, ScaleSetStatistics } from "./actions-port";

export interface ListenerState {
  /** The runner scale set's id at GitHub, once registered or adopted. */
  githubScaleSetId: number | null;
  session: ListenerSession | null;
  /** The queue token was refused: refresh the session before the next poll. */
  refreshNeeded: boolean;
  /** The last message whose effects are in D1 and which was acknowledged. */
  lastMessageId: number;
  statistics: ScaleSetStatistics | null;
  /** Straight failures, for the backoff. */
  failures: number;
  /** No step before this (unix ms). */
  retryAt: number | null;
  /** Since when another session has held the scale set (409), if it does. */
  conflictSince: number | null;
  lastError: string | null;
  /** A message that came unreadable, and how many polls have seen it so far. */
  unreadable: { messageId: number; tries: number } | null;
  /** Messages acknowledged unread (after UNREADABLE_MESSAGE_TRIES polls each). */
  unreadableMessages: number;
  /** The last of them: kept after the next good poll clears `lastError`. */
  lastUnreadable: { at: number; messageId: number; error: string } | null;
  /** Job items that failed validation: each was recorded (a job row when it had a request id) and logged. */
  invalidJobItems: number;
}

/** What the object keeps of its listener (object/object-state.ts); listener-host.ts seals and opens the queue token. */
export interface StoredListener {
  /** With `session.messageQueueAccessToken` sealed. */
  state: ListenerState;
  /** The entity the runner scale set lives at: still known after the scale set is deleted here. */
  entity: ScaleSetRecord["entity"];
}

export const INITIAL_LISTENER: ListenerState = {
  githubScaleSetId: null,
  session: null,
  refreshNeeded: false,
  lastMessageId: 0,
  statistics: null,
  failures: 0,
  retryAt: null,
  conflictSince: null,
  lastError: null,
  unreadable: null,
  unreadableMessages: 0,
  lastUnreadable: null,
  invalidJobItems: 0,
};

/** A state saved before some fields existed, with those fields at their start. */
export const withListenerDefaults = (s: Partial<ListenerState>): ListenerState => ({ ...INITIAL_LISTENER, ...s });

/**
 * Polls that may see the same unreadable message (not JSON, body not an array, envelope
 * malformed, too large) before it is acknowledged unread: it would come back for ever, and the
 * queue gives no other message until it is gone. A few tries ride out a glitch on the way.
 */
export const UNREADABLE_MESSAGE_TRIES = 3;

/** Which poll of this unreadable message this is (1 for the first). */
export const unreadableTry = (s: ListenerState, messageId: number): number =>
  (s.unreadable?.messageId === messageId ? s.unreadable.tries : 0) + 1;

/** GitHub's id of the default runner group, which every repository, organization and enterprise has. */
export const DEFAULT_RUNNER_GROUP_ID = 1;

/**
 * The runner group a runner scale set is registered in. ARC and actions/scaleset use id 1
 * without asking when no group is named; a repository has no runner groups at all (GitHub's
 * REST API has none for it), so a repository's runner scale set is always in the default one.
 * A named group of an organization or enterprise is looked up by name.
 */
export function runnerGroupChoice(
  entityKind: "repository" | "organization" | "enterprise",
  runnerGroup: string,
): { id: number } | { lookup: string } | { refused: string } {
  const name = runnerGroup.trim();
  if (entityKind === "repository")
    return name === "" || name.toLowerCase() === "default"
      ? { id: DEFAULT_RUNNER_GROUP_ID }
      : { refused: `runner group '${name}': a repository has no runner groups, only the default one` };
  return name === "" ? { id: DEFAULT_RUNNER_GROUP_ID } : { lookup: name };
}

/** What the scale set asks of its listener now. */
export interface ListenerWants {
  /** scaleset_api intake and enabled: keep a session and poll. Else: hold no session. */
  listen: boolean;
  /** The scale set is deleted: remove the runner scale set at GitHub too. */
  unregister?: boolean;
}

export type ListenerStep =
  | { kind: "register" }
  | { kind: "open_session" }
  | { kind: "refresh_session" }
  | { kind: "poll" }
  | { kind: "close_session" }
  /** Nothing until `until` (a backoff). */
  | { kind: "wait"; until: number }
  | { kind: "idle" };

export function nextStep(s: ListenerState, wants: ListenerWants, now: number): ListenerStep {
  if (!wants.listen) return s.session || (wants.unregister && s.githubScaleSetId !== null) ? { kind: "close_session" } : { kind: "idle" };
  if (s.retryAt !== null && s.retryAt > now) return { kind: "wait", until: s.retryAt };
  if (s.githubScaleSetId === null) return { kind: "register" };
  if (!s.session) return { kind: "open_session" };
  if (s.refreshNeeded) return { kind: "refresh_session" };
  return { kind: "poll" };
}

/** Backoff after `failures` straight failures: 2 s doubling to 5 min; a 409 waits at least 30 s. */
export function listenerBackoffMs(failures: number, kind: ActionsError["kind"]): number {
  const base = Math.min(2_000 * 2 ** Math.max(0, failures - 1), 5 * 60_000);
  return kind === "conflict" ? Math.max(base, 30_000) : base;
}

/** A message the poll acknowledged: its statistics, the items of it that failed validation, or why it was acknowledged unread. */
export interface HandledMessage {
  messageId: number;
  statistics: ScaleSetStatistics | null;
  invalidItems?: number;
  unreadable?: string;
}

export type StepOutcome =
  | { step: "register"; ok: true; githubScaleSetId: number }
  | { step: "open_session" | "refresh_session"; ok: true; session: ListenerSession }
  | { step: "poll"; ok: true; handled: HandledMessage | null }
  /** `unregistered`: the runner scale set was deleted at GitHub as well. */
  | { step: "close_session"; ok: true; unregistered: boolean }
  /** `unreadable`: the poll got a message it could not read and left it for another try. */
  | { step: Exclude<ListenerStep["kind"], "wait" | "idle">; ok: false; error: ActionsError; unreadable?: { messageId: number } };

/** The state after a step's outcome. Pure: `now` is the only time it knows. */
export function afterStep(s: ListenerState, o: StepOutcome, now: number): ListenerState {
  const cleared = { failures: 0, retryAt: null, lastError: null };
  if (o.ok) {
    switch (o.step) {
      case "register":
        return { ...s, ...cleared, githubScaleSetId: o.githubScaleSetId };
      case "open_session":
        // A new session starts a new queue: the old cursor means nothing there.
        return {
          ...s,
          ...cleared,
          session: o.session,
          refreshNeeded: false,
          conflictSince: null,
          lastMessageId: 0,
          unreadable: null,
          statistics: o.session.statistics ?? s.statistics,
        };
      case "refresh_session":
        // Failures stay counted until a poll goes through: a token refused again and again backs off.
        return { ...s, session: o.session, refreshNeeded: false, retryAt: null };
      case "poll": {
        const h = o.handled;
        if (!h) return { ...s, ...cleared };
        const next = {
          ...s,
          ...cleared,
          lastMessageId: h.messageId,
          statistics: h.statistics ?? s.statistics,
          unreadable: null,
          invalidJobItems: s.invalidJobItems + (h.invalidItems ?? 0),
        };
        if (h.unreadable === undefined) return next;
        // Acknowledged unread: the error stays shown until the next message (and in lastUnreadable after).
        const error = `message ${h.messageId} acknowledged unread after ${UNREADABLE_MESSAGE_TRIES} tries: ${h.unreadable}`;
        return {
          ...next,
          lastError: `poll: ${error}`,
          unreadableMessages: s.unreadableMessages + 1,
          lastUnreadable: { at: now, messageId: h.messageId, error },
        };
      }
      case "close_session":
        return {
          ...s,
          ...cleared,
          session: null,
          refreshNeeded: false,
          conflictSince: null,
          lastMessageId: 0,
          githubScaleSetId: o.unregistered ? null : s.githubScaleSetId,
        };
    }
  }
  const e = o.error;
  const failures = s.failures + 1;
  const failed = { ...s, failures, retryAt: now + listenerBackoffMs(failures, e.kind), lastError: `${o.step}: ${e.kind}: ${e.message}` };
  if (o.unreadable)
    return { ...failed, unreadable: { messageId: o.unreadable.messageId, tries: unreadableTry(s, o.unreadable.messageId) } };
  if (o.step === "close_session") {
    // A session we cannot close (GitHub down) is forgotten after a few tries: it expires on its own.
    return failures >= 3 ? { ...failed, session: null, githubScaleSetId: null, failures: 0, retryAt: null } : failed;
  }
  if (e.kind === "unauthorized" && (o.step === "poll" || o.step === "refresh_session")) {
    // Poll refused: the queue token expired; refresh at once. Refresh refused: start a new session.
    if (o.step === "refresh_session") return { ...failed, session: null, refreshNeeded: false };
    return { ...failed, refreshNeeded: true, retryAt: failures > 2 ? failed.retryAt : null };
  }
  if (e.kind === "not_found" && o.step !== "register") {
    // The session is gone (refresh/poll 404): open a new one. The scale set is gone (open 404):
    // register again. At once, unless it keeps happening. (A register 404, a runner group or
    // entity GitHub does not show these credentials, backs off like any failure.)
    const retryAt = failures > 2 ? failed.retryAt : now;
    if (o.step === "open_session") return { ...failed, githubScaleSetId: null, session: null, retryAt };
    return { ...failed, session: null, refreshNeeded: false, retryAt };
  }
  if (e.kind === "conflict" && o.step === "open_session") return { ...failed, conflictSince: s.conflictSince ?? now };
  return failed;
}

/** When the next step is due after this state: now, unless it waits for a backoff. */
export function nextStepAt(s: ListenerState, wants: ListenerWants, now: number): number | null {
  const step = nextStep(s, wants, now);
  if (step.kind === "idle") return null;
  return step.kind === "wait" ? step.until : now;
}

/** GitHub's result words as the jobs table writes conclusions (the REST API's). */
export function conclusionOf(result: string | null): string | null {
  if (!result) return null;
  const r = result.toLowerCase();
  return r === "succeeded" ? "success" : r === "failed" ? "failure" : r === "canceled" ? "cancelled" : r;
}

const STATUS: Record<Exclude<JobMessage["type"], "JobAvailable">, JobStatus> = {
  JobAssigned: "queued",
  JobStarted: "in_progress",
  JobCompleted: "completed",
};

/**
 * A job event from the queue as the jobs table keeps it, so it merges by the intake's rules
 * (intake/job-merge.ts) like a webhook's. Its id is the runner request id: the queue carries no
 * REST job id, and a request id is unique per job attempt. Its source, `scaleset_api`, keeps it
 * apart from a REST job that happens to have the same number. JobAvailable writes nothing: the
 * job is not ours until acquired and assigned.
 */
export function jobStateOf(m: JobMessage, route: { entityId: string; scaleSetId: string }): JobState | null {
  if (m.type === "JobAvailable") return null;
  const status = STATUS[m.type];
  const started = status !== "queued";
  return {
    source: "scaleset_api",
    id: m.runnerRequestId,
    runId: m.workflowRunId,
    runAttempt: 1,
    name: m.jobDisplayName,
    workflowName: null,
    repository: m.repository,
    owner: m.owner,
    labels: m.requestLabels,
    status,
    conclusion: status === "completed" ? conclusionOf(m.result) : null,
    runnerName: started ? m.runnerName : null,
    runnerId: started ? m.runnerId : null,
    queuedAt: m.queueTime,
    startedAt: started ? m.runnerAssignTime : null,
    completedAt: status === "completed" ? m.finishTime : null,
    entityId: route.entityId,
    scaleSetId: route.scaleSetId,
  };
}

/** The longest `problem` a job row keeps. */
export const MAX_PROBLEM_CHARS = 1000;

/** Why intake could not take an item as it came, as the job row's `problem` says it (bounded). */
export function problemText(problems: string[]): string {
  const text = `queue item failed validation: ${problems.join("; ")}`;
  return text.length > MAX_PROBLEM_CHARS ? `${text.slice(0, MAX_PROBLEM_CHARS - 1)}…` : text;
}

/**
 * An item that failed validation, as a job row, when it has a request id to key it by: its
 * scale set's entity, its status from its type (queued when that failed too, or for
 * JobAvailable: such a job is not acquired), what of it was readable, and `problem`. It is not
 * routed (a row it creates is unmatched, so it adds no runner) and links no runner: nothing in
 * it is trusted to act on. A row the queue's valid events made keeps its scale set.
 */
export function invalidJobStateOf(item: InvalidJobItem, route: { entityId: string }): JobState | null {
  if (item.runnerRequestId === null) return null;
  const status = item.type && item.type !== "JobAvailable" ? STATUS[item.type] : "queued";
  return {
    source: "scaleset_api",
    id: item.runnerRequestId,
    runId: item.workflowRunId,
    runAttempt: 1,
    name: item.jobDisplayName,
    workflowName: null,
    repository: item.repository,
    owner: item.owner,
    labels: item.requestLabels,
    status,
    conclusion: status === "completed" ? conclusionOf(item.result) : null,
    runnerName: null,
    runnerId: null,
    queuedAt: item.queueTime,
    startedAt: status !== "queued" ? item.runnerAssignTime : null,
    completedAt: status === "completed" ? item.finishTime : null,
    entityId: route.entityId,
    scaleSetId: null,
    problem: problemText(item.problems),
  };
}

export interface MessagePlan {
  /** Runner request ids to acquire (JobAvailable), before anything else. */
  acquire: number[];
  /** Job rows to merge into D1, each with a key that makes a replay change nothing. */
  jobs: { key: string; action: string; job: JobState }[];
}

/**
 * What one message asks for. Keys are per scale set, request and step, so a message that comes
 * back (not acked) is a no-op; an invalid item's key is apart from a valid one's, so GitHub
 * sending the step again, readable, still takes effect.
 */
export function messagePlan(msg: QueueMessage, route: { entityId: string; scaleSetId: string; githubScaleSetId: number }): MessagePlan {
  const acquire = [...new Set(msg.jobs.filter((j) => j.type === "JobAvailable").map((j) => j.runnerRequestId))];
  const jobs = msg.jobs.flatMap((m) => {
    const job = jobStateOf(m, route);
    return job
      ? [{ key: `scaleset:${route.githubScaleSetId}:${m.runnerRequestId}:${m.type}`, action: STATUS[m.type as keyof typeof STATUS], job }]
      : [];
  });
  const invalid = msg.invalid.flatMap((item) => {
    const job = invalidJobStateOf(item, route);
    return job
      ? [{ key: `scaleset:${route.githubScaleSetId}:${item.runnerRequestId}:${item.type ?? "unknown"}:invalid`, action: job.status, job }]
      : [];
  });
  return { acquire, jobs: [...jobs, ...invalid] };
}

/**
 * Jobs waiting for a runner, as the planner counts them (it adds min idle and caps at max), in
 * scaleset_api intake: the jobs assigned to the scale set and not yet started that D1 holds
 * (each came as a JobAssigned message), capped by GitHub's own count of them
 * (totalAssignedJobs - totalRunningJobs). So the total is ARC's and GARM's
 * min(min_runners + totalAssignedJobs, max_runners) once both agree; and neither a runner
 * that reports busy before its JobStarted message (`busyWithoutJob`: such runners of ours) nor a
 * job GitHub dropped without telling us adds a runner. Without statistics yet, D1's count alone.
 */
export function listenerDemand(stats: ScaleSetStatistics | null, queuedInD1: number, busyWithoutJob = 0): number {
  // A runner of ours that reports busy before its JobStarted message is running one of these
  // jobs (a runner scale set's runners only get its jobs): that job needs no other runner.
  const waiting = Math.max(0, queuedInD1 - busyWithoutJob);
  if (!stats) return waiting;
  return Math.min(waiting, Math.max(0, stats.totalAssignedJobs - stats.totalRunningJobs));
}
