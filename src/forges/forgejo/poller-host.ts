/**
 * The Forgejo poller inside a ScaleSet object (intake `poll`): loads its state from the object's
 * SQLite, takes one poll at a time (a call while one is under way waits for that one), saves
 * the state and arms the object's `forgejo_poll` timer for the next. The decisions are
 * poller.ts's; the calls poller-driver.ts's. It lives beside the Forgejo client rather than in
 * src/scaleset/ because everything in it is Forgejo's; the object only calls `tick` and `status`.
 */
import { loadScaleSetSnapshot, type ScaleSetRecord, type ScaleSetSnapshotRows } from "../../db/scaleset/snapshot-store";
import type { Env } from "../../env";
import { errorText, logEvent as log } from "../../observability/log";
import type { ObjectState } from "../../scaleset/object/object-state";
import type { PollerStatus } from "../../scaleset/object/status-types";
import {
  afterPoll,
  type HeldJob,
  INITIAL_POLLER,
  jobsToBind,
  nextPollAt,
  type PollerState,
  type PollInstance,
  withPollerDefaults,
} from "./poller";
import { runPoll } from "./poller-driver";
import { forgejoJobsPort } from "./runner-port";

export const TIMER = "forgejo_poll";

/** Whether a scale set polls Forgejo: enabled, intake `poll`, on a Forgejo endpoint. */
export const pollsForgejo = (ss: ScaleSetRecord | null): boolean =>
  !!ss && ss.enabled && ss.intake === "poll" && ss.endpoint.forge === "forgejo";

export const pollInstances = (rows: Pick<ScaleSetSnapshotRows, "instances">): PollInstance[] =>
  rows.instances.map((i) => ({
    name: i.name,
    status: i.status,
    runnerStatus: i.runnerStatus,
    jobId: i.jobId ?? null,
    agentId: i.agentId ?? null,
  }));

export class PollerHost {
  private running: Promise<boolean> | null = null;

  constructor(
    private readonly env: Env,
    private readonly objectState: ObjectState,
    private readonly intervalMs: number,
  ) {}

  /** The object's outbound limiter's fetch, when it has one. */
  outbound: typeof fetch | undefined;

  private get state(): PollerState {
    return withPollerDefaults(this.objectState.poller);
  }

  /** The jobs held now (the executor binds new runners to them). */
  held(): Record<string, HeldJob> {
    return this.state.held;
  }

  /** Arms the poll timer when the scale set polls and none is armed (new, enabled again); clears it when it does not. */
  arm(ss: ScaleSetRecord | null, now = Date.now()): void {
    const due = nextPollAt(this.state, pollsForgejo(ss), this.intervalMs);
    if (due === null) {
      // Read first: most scale sets never poll, and every pass comes here.
      if (this.objectState.timer(TIMER) !== null) this.objectState.setTimer(TIMER, null);
      return;
    }
    if (this.running) return;
    this.objectState.setTimer(TIMER, Math.max(due, now));
  }

  status(): PollerStatus | null {
    const stored = this.objectState.poller;
    if (!stored) return null;
    const s = withPollerDefaults(stored);
    const iso = (t: number | null) => (t === null ? null : new Date(t).toISOString());
    return {
      last_poll_at: iso(s.lastPollAt),
      next_poll_at: iso(this.objectState.timer(TIMER)),
      waiting_jobs_seen: s.lastWaiting,
      held_jobs: Object.keys(s.held).length,
      failures: s.failures,
      retry_at: iso(s.retryAt),
      last_error: s.lastError,
      invalid_jobs: s.invalidJobs,
    };
  }

  /**
   * The object's turn for the poller: one poll if one is due (or `force`d, ignoring a backoff),
   * then `afterChange` when jobs were taken or left (the object plans at once). Never throws.
   */
  async tick(scaleSetId: string, force: boolean, afterChange: () => Promise<void>): Promise<void> {
    // Not due (or not a polling scale set: no timer): nothing to read.
    const due = this.objectState.timer(TIMER);
    if (!force && (due === null || due > Date.now())) return;
    try {
      if (this.running) {
        await this.running;
        return;
      }
      this.running = this.poll(scaleSetId, force).finally(() => (this.running = null));
      if (await this.running) await afterChange();
    } catch (err) {
      log({ event: "forgejo_poller_failed", scale_set: scaleSetId, error: errorText(err) });
      this.objectState.setTimer(TIMER, Date.now() + 5_000);
    }
  }

  private async poll(scaleSetId: string, force: boolean): Promise<boolean> {
    const rows = await loadScaleSetSnapshot(this.env.DB, scaleSetId);
    const ss = rows.scaleSet;
    if (!pollsForgejo(ss)) {
      // Disabled, another intake, or gone: nothing to poll; held jobs stay in D1 as they are.
      if (!ss) this.objectState.poller = null;
      this.objectState.setTimer(TIMER, null);
      return false;
    }
    const state = this.objectState.poller ? this.state : INITIAL_POLLER;
    const now = Date.now();
    const due = nextPollAt(state, true, this.intervalMs)!;
    if (!force && due > now) {
      this.objectState.setTimer(TIMER, due);
      return false;
    }
    let result: Awaited<ReturnType<typeof runPoll>>;
    try {
      result = await runPoll({
        db: this.env.DB,
        port: forgejoJobsPort(this.env, ss!.entity, this.outbound),
        scaleSet: ss!,
        state,
        instances: pollInstances(rows),
        now: Date.now,
      });
    } catch (err) {
      // D1 failing mid-poll: every write is idempotent, the next poll finishes the job.
      result = { outcome: { ok: false, error: errorText(err) }, changed: false };
    }
    const next = afterPoll(state, result.outcome, Date.now());
    if (!result.outcome.ok)
      log({
        event: "forgejo_poll_failed",
        scale_set: scaleSetId,
        failures: next.failures,
        error: result.outcome.error,
        retry_at: next.retryAt,
      });
    this.objectState.poller = next;
    this.objectState.setTimer(TIMER, nextPollAt(next, true, this.intervalMs));
    return result.changed;
  }
}

/**
 * The held job each new runner of a pass is made for (by instance id), one runner per job; a
 * new instance left without one (more creates than jobs) gets no runner. Read from the object's
 * state, which only the object writes, between polls: no job is bound twice.
 */
export function bindNewRunners(
  objectState: ObjectState,
  rows: Pick<ScaleSetSnapshotRows, "instances">,
  fresh: readonly { id: string }[],
): Map<string, HeldJob> {
  const jobs = jobsToBind(withPollerDefaults(objectState.poller).held, pollInstances(rows), fresh.length);
  return new Map(jobs.map((job, index) => [fresh[index]!.id, job]));
}
