/**
 * The Forgejo poller's decisions, pure over plain data (intake `poll`). Forgejo sends no
 * `workflow_job` webhooks; a Forgejo scale set's object asks for the waiting jobs of its entity's
 * scope every poll interval, one request in flight, backing off when Forgejo fails. This module
 * says when the next poll is due (`nextPollAt`), how an outcome moves the state (`afterPoll`), what
 * a waiting list means (`pollPlan`: which jobs to take, which left the queue and how), and which
 * held jobs new runners are made for (`jobsToBind`). The object keeps the state in its SQLite
 * (poller-host.ts); poller-driver.ts carries a poll out.
 */
import type { InstanceStatus, RunnerStatus } from "../../db/runner/schema";
import { servesLabels } from "../../intake/routing";
import type { ForgejoJob } from "./forgejo-api";

/** A job this scale set took: its row in D1 (`seq`) and the handle its runner asks for. */
export interface HeldJob {
  id: number;
  seq: number;
  handle: string;
  /** Its runner took it (it left Forgejo's waiting list while the runner was up): its row is in_progress. */
  taken: boolean;
}

export interface PollerState {
  /** Straight failures, for the backoff. */
  failures: number;
  /** No poll before this (unix ms): a backoff, or the end of Forgejo's throttling. */
  retryAt: number | null;
  lastPollAt: number | null;
  lastError: string | null;
  /** Waiting jobs of the scope the last good poll listed (every label; this scale set takes those it serves). */
  lastWaiting: number | null;
  /** Jobs this scale set holds (its job rows), by Forgejo's job id. */
  held: Record<string, HeldJob>;
  /** Listed jobs that failed validation, counted over the poller's life. */
  invalidJobs: number;
}

export const INITIAL_POLLER: PollerState = {
  failures: 0,
  retryAt: null,
  lastPollAt: null,
  lastError: null,
  lastWaiting: null,
  held: {},
  invalidJobs: 0,
};

export const withPollerDefaults = (s: Partial<PollerState> | null | undefined): PollerState => ({ ...INITIAL_POLLER, ...(s ?? {}) });

/** When the next poll is due, or null: the scale set does not poll (disabled, other intake, gone). */
export function nextPollAt(s: PollerState, polls: boolean, intervalMs: number): number | null {
  if (!polls) return null;
  if (s.retryAt !== null) return s.retryAt;
  return (s.lastPollAt ?? 0) + intervalMs;
}

/** Backoff after `failures` straight failures: 2 s doubling to 5 min. */
export function pollerBackoffMs(failures: number): number {
  return Math.min(2_000 * 2 ** Math.max(0, failures - 1), 5 * 60_000);
}

export type PollOutcome =
  /** `waiting`: the waiting jobs the scope listed. */
  | { ok: true; held: Record<string, HeldJob>; invalid: number; waiting: number }
  /** `retryAt`: Forgejo said when to come back (throttling); else the backoff decides. */
  | { ok: false; error: string; retryAt?: number };

/** The state after a poll. Pure: `now` is the only time it knows. */
export function afterPoll(s: PollerState, o: PollOutcome, now: number): PollerState {
  if (o.ok)
    return {
      ...s,
      failures: 0,
      retryAt: null,
      lastError: null,
      lastPollAt: now,
      lastWaiting: o.waiting,
      held: o.held,
      invalidJobs: s.invalidJobs + o.invalid,
    };
  const failures = s.failures + 1;
  return { ...s, failures, lastError: o.error, lastPollAt: now, retryAt: Math.max(o.retryAt ?? 0, now + pollerBackoffMs(failures)) };
}

/** An instance as the poller sees it: which job it was made for and how far its runner got. */
export interface PollInstance {
  name: string;
  status: InstanceStatus;
  runnerStatus: RunnerStatus;
  /** Forgejo's id of the job it was made for, if any. */
  jobId: number | null;
  /** Forgejo's id of its runner. */
  agentId?: number | null;
}

/** What a held job that left the waiting list becomes. */
export type Departure =
  /** Its runner was up when it left: the runner took it. */
  | { job: HeldJob; becomes: "in_progress"; instance: string }
  /** Nobody of ours took it (cancelled, or another runner did): it asks for no runner any more, and its runner, if any, is let go. */
  | { job: HeldJob; becomes: "left_queue"; instance: string | null }
  /** Taken, and its runner is done or gone: the job is over as far as we can tell. */
  | { job: HeldJob; becomes: "completed"; instance: string | null };

export interface PollPlan {
  /** Waiting jobs this scale set may take (labels match) and does not hold yet: their rows are written. */
  take: ForgejoJob[];
  /** Held jobs still waiting (kept as they are). */
  stillWaiting: HeldJob[];
  departures: Departure[];
}

/** A runner that reported in is up and asking Forgejo for its job. */
const RUNNER_UP: readonly RunnerStatus[] = ["idle", "online", "active"];
const RUNNER_DONE: readonly RunnerStatus[] = ["terminated", "failed"];

/**
 * What one waiting list means for this scale set. A job is taken when every label it asks for is
 * one of the scale set's (the same rule as webhook routing) and not held already; the D1 key
 * (entity, source `poll`, job id) makes sure no other scale set takes it too. A held job that is
 * no longer listed left the queue: taken by our runner if the runner it was made for was up,
 * else it left without us.
 */
export function pollPlan(
  held: Record<string, HeldJob>,
  waiting: readonly ForgejoJob[],
  labels: readonly string[],
  instances: readonly PollInstance[],
  /** The ids of the runners Forgejo has now, when the poll listed them (it does while a taken job runs). */
  runnersAtForgejo: ReadonlySet<number> | null = null,
): PollPlan {
  const listed = new Set(waiting.map((j) => j.id));
  const take = waiting.filter((j) => !held[String(j.id)] && servesLabels(labels, j.runs_on));
  const runnerOf = new Map<number, PollInstance>();
  for (const i of instances) if (i.jobId !== null && i.status !== "deleted") runnerOf.set(i.jobId, i);
  const stillWaiting: HeldJob[] = [];
  const departures: Departure[] = [];
  for (const job of Object.values(held)) {
    const runner = runnerOf.get(job.id) ?? null;
    if (job.taken) {
      // Forgejo removes an ephemeral runner once its job is done: a runner gone there is a job over,
      // even when its machine could not say so (its instance token expired during a long job).
      const removed = runnersAtForgejo !== null && runner?.agentId != null && !runnersAtForgejo.has(runner.agentId);
      if (!runner || removed || RUNNER_DONE.includes(runner.runnerStatus))
        departures.push({ job, becomes: "completed", instance: runner?.name ?? null });
      continue;
    }
    if (listed.has(job.id)) {
      stillWaiting.push(job);
      continue;
    }
    if (runner && RUNNER_UP.includes(runner.runnerStatus)) departures.push({ job, becomes: "in_progress", instance: runner.name });
    else departures.push({ job, becomes: "left_queue", instance: runner?.name ?? null });
  }
  return { take, stillWaiting, departures };
}

/** Whether a poll must list Forgejo's runners: a taken job runs, and its end shows as its runner gone. */
export const needsRunnerList = (held: Record<string, HeldJob>): boolean => Object.values(held).some((j) => j.taken);

/** The held jobs after a poll: still waiting ones, taken ones still running, and the new ones. */
export function heldAfter(plan: PollPlan, taken: readonly HeldJob[], previous: Record<string, HeldJob>): Record<string, HeldJob> {
  const next: Record<string, HeldJob> = {};
  for (const j of plan.stillWaiting) next[String(j.id)] = j;
  const gone = new Set(plan.departures.filter((d) => d.becomes !== "in_progress").map((d) => d.job.id));
  for (const d of plan.departures) if (d.becomes === "in_progress") next[String(d.job.id)] = { ...d.job, taken: true };
  for (const j of Object.values(previous)) if (j.taken && !gone.has(j.id)) next[String(j.id)] = j;
  for (const j of taken) next[String(j.id)] = j;
  return next;
}

/**
 * The held jobs new runners are made for, oldest first (Forgejo's ids grow): those still waiting
 * whose runner is not live (none made yet, or it went without taking the job). One runner per job.
 */
export function jobsToBind(held: Record<string, HeldJob>, instances: readonly PollInstance[], count: number): HeldJob[] {
  const bound = new Set(instances.filter((i) => i.status !== "deleted" && i.jobId !== null).map((i) => i.jobId));
  return Object.values(held)
    .filter((j) => !j.taken && !bound.has(j.id))
    .sort((a, b) => a.id - b.id)
    .slice(0, Math.max(0, count));
}
