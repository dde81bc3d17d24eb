/**
 * The scale set API listener inside a ScaleSet object: loads its state from the object's
 * SQLite (the queue token sealed), takes one step at a time (never two polls in flight),
 * saves the state, and says when the next step is due. The decisions are listener.ts's;
 * the calls are listener-driver.ts's.
 */
import { keyringFor } from "../../crypto/keyring";
import { open, seal } from "../../crypto/secret-box";
import { secretContext } from "../../crypto/secret-contexts";
import { loadScaleSetSnapshot, type ScaleSetRecord, type ScaleSetSnapshotRows } from "../../db/scaleset/snapshot-store";
import type { Env } from "../../env";
import { errorText, logEvent as log } from "../../observability/log";
import type { ObjectState } from "../object/object-state";
import type { ListenerStatus } from "../object/status-types";
import { actionsServicePort } from "../ports-factory";
import {
  afterStep,
  INITIAL_LISTENER,
  type ListenerState,
  type ListenerWants,
  listenerDemand,
  nextStep,
  nextStepAt,
  type StepOutcome,
  type StoredListener,
  withListenerDefaults,
} from "./listener";
import { runListenerStep } from "./listener-driver";

export const wantsOf = (ss: ScaleSetRecord | null): ListenerWants => ({
  listen: !!ss && ss.enabled && ss.intake === "scaleset_api",
  unregister: !ss,
});

export class ListenerHost {
  private running: Promise<StepOutcome | null> | null = null;

  constructor(
    private readonly env: Env,
    private readonly objectState: ObjectState,
    /** Delay before a step that is due at once (0 in production; tests drive the object themselves). */
    private readonly rearmMs: number,
  ) {}

  /**
   * The object's outbound limiter's `fetchFirst`, when it has one: the long poll counts among its
   * six connections, as the platform counts it, but never queues behind creates (lib/outbound-limit.ts).
   */
  outbound: typeof fetch | undefined;

  /** Jobs waiting for a runner, as the planner counts them in scaleset_api intake (see listenerDemand). */
  demand(rows: Pick<ScaleSetSnapshotRows, "queuedJobs" | "instances">): number {
    const busyWithoutJob = rows.instances.filter(
      (i) => i.runnerStatus === "active" && (i.jobStatus === null || i.jobStatus === "queued"),
    ).length;
    return listenerDemand(this.objectState.listener?.state.statistics ?? null, rows.queuedJobs, busyWithoutJob);
  }

  /** A step (usually a long poll) is under way. */
  get busy(): boolean {
    return this.running !== null;
  }

  /** When the listener's next step is due for this scale set (now, after a backoff), or null: nothing to do or undo. */
  dueAt(ss: ScaleSetRecord | null, now = Date.now()): number | null {
    const stored = this.objectState.listener;
    if (!stored && !wantsOf(ss).listen) return null;
    return nextStepAt(stored?.state ?? INITIAL_LISTENER, wantsOf(ss), now);
  }

  /**
   * Arms the listener's timer when a step is due but none is armed. Only a step arms the next
   * one, so a scale set that wants a first step (register and open a session when created or
   * enabled again) had none armed: while nudges armed an alarm for now, that alarm took it; now
   * that a nudge reconciles at once, it would wait for the next tick (RECONCILE_INTERVAL_SECONDS,
   * 30 s), and jobs queued meanwhile found no runner scale set at GitHub. Called by every pass;
   * a timer already armed (a backoff, the next poll) and a step under way are left alone.
   */
  armFirstStep(ss: ScaleSetRecord | null, now = Date.now()): void {
    if (this.running) return;
    const due = this.dueAt(ss, now);
    if (due === null || this.objectState.timer("listen") !== null) return;
    this.objectState.setTimer("listen", Math.max(due, now + this.rearmMs));
  }

  status(): ListenerStatus | null {
    const stored = this.objectState.listener;
    if (!stored) return null;
    const s = withListenerDefaults(stored.state);
    const u = s.lastUnreadable;
    return {
      github_scale_set_id: s.githubScaleSetId,
      session_open: s.session !== null,
      last_message_id: s.lastMessageId,
      statistics: s.statistics,
      failures: s.failures,
      retry_at: s.retryAt === null ? null : new Date(s.retryAt).toISOString(),
      last_error: s.lastError,
      invalid_job_items: s.invalidJobItems,
      unreadable_messages: s.unreadableMessages,
      last_unreadable: u && { at: new Date(u.at).toISOString(), message_id: u.messageId, error: u.error },
    };
  }

  /**
   * The object's turn for the listener: one step if one is due (or `force`d), then
   * `afterMessage` when a message was handled (the object reconciles, so runners come at once).
   * Once a deleted scale set is unregistered at GitHub, the listener forgets it and a `retry`
   * pass clears the object. Never throws.
   */
  async tick(scaleSetId: string, force: boolean, afterMessage: () => Promise<void>): Promise<void> {
    try {
      const ss = (await loadScaleSetSnapshot(this.env.DB, scaleSetId)).scaleSet;
      const due = this.dueAt(ss);
      if (due === null || (!force && due > Date.now())) return;
      const outcome = await this.step(scaleSetId, ss, force);
      if (outcome?.step === "poll" && outcome.ok && outcome.handled) await afterMessage();
      if (!ss && this.dueAt(null) === null) {
        this.forget();
        this.objectState.setTimer("retry", Date.now());
      }
    } catch (err) {
      log({ event: "listener_failed", scale_set: scaleSetId, error: errorText(err) });
      this.objectState.setTimer("listen", Date.now() + 5_000);
    }
  }

  /**
   * One step, if one is due (`force`: ignore a backoff). A call while a step is under way
   * waits for that one instead: one poll in flight at a time.
   */
  step(scaleSetId: string, ss: ScaleSetRecord | null, force = false): Promise<StepOutcome | null> {
    if (this.running) return this.running;
    this.running = this.takeStep(scaleSetId, ss, force).finally(() => (this.running = null));
    return this.running;
  }

  private async takeStep(scaleSetId: string, ss: ScaleSetRecord | null, force: boolean): Promise<StepOutcome | null> {
    const stored = this.objectState.listener;
    const entity = ss?.entity ?? stored?.entity;
    if (!entity) return null;
    const wants = wantsOf(ss);
    // A state saved by an older version lacks the newer fields.
    let state = stored ? await this.load(scaleSetId, withListenerDefaults(stored.state)) : INITIAL_LISTENER;
    const now = Date.now();
    if (force) state = { ...state, retryAt: null };
    const step = nextStep(state, wants, now);
    if (step.kind === "wait" || step.kind === "idle") {
      this.arm(state, wants);
      return null;
    }
    let outcome: StepOutcome;
    try {
      outcome = await runListenerStep(
        {
          db: this.env.DB,
          port: actionsServicePort(this.env, entity, this.outbound),
          scaleSet: ss,
          scaleSetId,
          state,
          owner: `edgerunner-${scaleSetId}`,
          now: Date.now,
        },
        step,
      );
    } catch (err) {
      // D1 failing mid-message: the message is not acked, so it comes back.
      outcome = { step: step.kind, ok: false, error: { kind: "retryable", message: errorText(err) } };
    }
    const next = afterStep(state, outcome, Date.now());
    if (!outcome.ok)
      log({
        event: "listener_step_failed",
        scale_set: scaleSetId,
        step: step.kind,
        kind: outcome.error.kind,
        status: outcome.error.status ?? null,
        error: outcome.error.message,
      });
    await this.save(scaleSetId, next, entity);
    this.arm(next, wants);
    return outcome;
  }

  private arm(state: ListenerState, wants: ListenerWants) {
    const now = Date.now();
    const due = nextStepAt(state, wants, now);
    this.objectState.setTimer("listen", due === null ? null : Math.max(due, now + this.rearmMs));
  }

  /** Forgets everything (the scale set is gone and its session closed). */
  forget() {
    this.objectState.listener = null;
    this.objectState.setTimer("listen", null);
  }

  private async load(scaleSetId: string, s: ListenerState): Promise<ListenerState> {
    if (!s.session) return s;
    try {
      const token = await open(await keyringFor(this.env), s.session.messageQueueAccessToken, secretContext.listenerQueueToken(scaleSetId));
      return { ...s, session: { ...s.session, messageQueueAccessToken: token } };
    } catch {
      // Sealed with a key that is gone: a refresh hands out a new token for the same session.
      return { ...s, session: { ...s.session, messageQueueAccessToken: "" }, refreshNeeded: true };
    }
  }

  private async save(scaleSetId: string, s: ListenerState, entity: StoredListener["entity"]) {
    const sealed = s.session
      ? {
          ...s,
          session: {
            ...s.session,
            messageQueueAccessToken: await seal(
              await keyringFor(this.env),
              s.session.messageQueueAccessToken,
              secretContext.listenerQueueToken(scaleSetId),
            ),
          },
        }
      : s;
    this.objectState.listener = { state: sealed, entity };
  }
}
