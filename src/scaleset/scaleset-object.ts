// Every decision the object makes lives in a module beside it (a pass: executor/reconcile-pass.ts;
// reconcile, jit/, schedule/, guards/), so that what is left here is the wiring: the RPC surface,
// the alarm and the run they share.
import { DurableObject } from "cloudflare:workers";
import { measuredD1 } from "../db/counting-d1";
import { findInstance } from "../db/runner/instance-lookups";
import { applyStatusChanges } from "../db/runner/instance-store";
import { readAndApplyRunnerReport } from "../db/runner/runner-report-store";
import type { InstanceStatus } from "../db/runner/schema";
import type { Env } from "../env";
import { PollerHost } from "../forges/forgejo/poller-host";
import { asKind, invocationBudget, measure, noCost, usePlan } from "../lib/invocation-cost";
import { meteredSql, meterStorageRows } from "../lib/metered-sql";
import { type OutboundLimiter, outboundLimiter } from "../lib/outbound-limit";
import { errorText, logEvent as log, logAt } from "../observability/log";
import type { ShimCallback } from "../providers/shim-protocol";
import { pokeRecovery } from "../recovery/poke";
import { NO_CREATE_BACKOFF } from "./backoff";
import { InvocationRecord, measureInvocations } from "./executor/invocation-record";
import type { ExecutorContext } from "./executor/plan-executor";
import { ReconcilePass } from "./executor/reconcile-pass";
import { RunCoalescer } from "./executor/run-coalescer";
import { RunRecord } from "./executor/run-record";
import { canTransition } from "./instance-states";
import { ListenerHost } from "./listener/listener-host";
import { transitionLevel } from "./log-levels";
import { callbackResult, operationOutcome } from "./machine-outcomes";
import { ObjectState } from "./object/object-state";
import { objectStatus } from "./object/object-status";
import type { ScaleSetStatus } from "./object/status-types";
import { afterCreate, keepCreateBackoff, keepOutcome } from "./outcome-keeping";
import type { RunnerReport, RunnerReportRefusal, ScaleSetRpc } from "./rpc";
import { instanceRefusal } from "./runner/instance-access";
import { reportChangesInAdvance, runnerReportChange, runnerReportEvents } from "./runner/runner-report";
import { type ScaleSetSettings, scaleSetSettings } from "./settings";

/**
 * Whether an alarm of this isolate made sure delivery recovery is scheduled (src/recovery/: it
 * re-arms itself after; the hourly trigger pokes too). Per isolate, not per object: idle objects
 * are evicted between ticks, and a poke per wake-up is a billed request each.
 */
let recoveryPoked = false;

/** Passes a run may make before it leaves the rest to the alarm (a pass that acted goes again at once). */
const MAX_PASSES_PER_RUN = 4;

/**
 * One object per scale set, the single writer of its instances' lifecycle. Woken by nudges
 * (webhooks, admin changes), a periodic tick, and due timers, all through one alarm. Each run
 * loads a snapshot in one D1 round trip, plans with the pure planner, and carries the plan
 * out with a fixed number of further round trips; outbound calls run in parallel in between.
 */
export class ScaleSet extends DurableObject<Env> implements ScaleSetRpc {
  private readonly state: ObjectState;
  private readonly settings: ScaleSetSettings;
  /** Instances with an operation of this incarnation under way: nobody else may touch them. */
  private readonly inFlight = new Set<string>();
  private readonly runs: RunCoalescer;
  private readonly pass: ReconcilePass;
  private readonly executor: ExecutorContext;
  private readonly runRecord: RunRecord;
  private readonly listener: ListenerHost;
  /** Forgejo scale sets (intake `poll`): polls for waiting jobs (src/forges/forgejo/). */
  private readonly poller: PollerHost;
  private limiter: OutboundLimiter | null = null;
  /** What each alarm and RPC spends of Cloudflare's per-invocation budgets (its status). */
  readonly invocations: InvocationRecord;
  /** Whether a nudge of this incarnation made sure an alarm is armed. */
  private safetyNetChecked = false;
  /** The wall clock min idle schedules are read against (tests set one; nothing else does). */
  private clock: () => number = () => Date.now();

  constructor(ctx: DurableObjectState, env: Env) {
    // Every D1 call the object makes, through whatever client, counts toward its invocation.
    usePlan(env.CLOUDFLARE_PLAN);
    const db = measuredD1(env.DB);
    super(ctx, new Proxy(env, { get: (target, prop, receiver) => (prop === "DB" ? db : Reflect.get(target, prop, receiver)) }));
    this.invocations = new InvocationRecord(() => this.state.scaleSetId);
    this.runs = new RunCoalescer(Math.min(MAX_PASSES_PER_RUN, invocationBudget().passesPerRun));
    this.state = new ObjectState(meteredSql(ctx.storage.sql));
    this.settings = scaleSetSettings(env);
    this.runRecord = new RunRecord(this.env.DB, this.state);
    this.listener = new ListenerHost(this.env, this.state, this.settings.listenRearmMs);
    this.poller = new PollerHost(this.env, this.state, this.settings.forgejoPollMs);
    this.executor = {
      env: this.env,
      state: this.state,
      settings: this.settings,
      inFlight: this.inFlight,
      replan: () =>
        void this.invocations
          .hold("reconcile", this.reconcile("create_settled"))
          .then(() => this.arm())
          .catch(() => {}),
    };
    this.pass = new ReconcilePass({
      executor: this.executor,
      listener: this.listener,
      poller: this.poller,
      runRecord: this.runRecord,
      storage: ctx.storage,
      clock: () => this.clock(),
    });
    this.limitOutbound(this.settings.outboundConnections);
  }

  /** One limiter for every outbound call (alarm and requests alike), as the platform's; the listener's go first in line. */
  private limitOutbound(limit: number | null): void {
    this.limiter = limit === null ? null : outboundLimiter(limit);
    this.executor.outbound = this.limiter?.fetch;
    this.listener.outbound = this.limiter?.fetchFirst;
    this.poller.outbound = this.limiter?.fetchFirst;
  }

  // ---- RPC ------------------------------------------------------------------------------
  /** Something changed (a job arrived, the scale set was edited): reconcile as soon as possible. */
  async nudge(scaleSetId: string): Promise<void> {
    this.state.bind(scaleSetId);
    // A run under way may have read D1 before the caller wrote: it goes once more, or arms the
    // alarm at once when it is done.
    if (this.runs.underWay) return this.runs.ask();
    // Reconcile now rather than through an alarm armed for now, which costs storage writes and
    // the scheduler's delay before the pass starts (docs/performance.md). The alarm stays the
    // safety net: every pass leaves the tick armed, and an incarnation's first nudge arms one
    // if there is none. Also beside the listener's long poll (the alarm holds it up to ~50 s).
    if (this.settings.nudgeDelayMs === 0 || this.listener.busy) {
      if (!this.safetyNetChecked) {
        this.safetyNetChecked = true;
        if ((await this.ctx.storage.getAlarm()) === null) {
          this.state.setTimer("tick", Date.now() + this.settings.tickMs);
          await this.arm();
        }
        if (this.runs.underWay) return this.runs.ask();
      }
      void this.invocations
        .hold("reconcile", this.reconcile("nudge"))
        .then(() => this.arm())
        .catch((err) => {
          log({ event: "reconcile_failed", scale_set: scaleSetId, error: errorText(err) });
          this.state.setTimer("retry", Date.now() + 5_000);
          return this.arm();
        })
        .catch(() => {});
      return;
    }
    // Tests hold passes back (NUDGE_DELAY_SECONDS) to drive the alarm themselves.
    const due = Date.now() + this.settings.nudgeDelayMs;
    // An alarm armed no later than that has not started yet (a running alarm reads as none),
    // so its pass will see whatever the caller wrote: nothing to write. Webhook bursts nudge
    // once per delivery; this keeps them to a cached read each.
    const armed = await this.ctx.storage.getAlarm();
    if (armed !== null && armed <= due) return;
    this.state.setTimer("nudge", due);
    await this.arm();
  }

  /** Reconciles now and reports how it went. */
  async reconcileNow(scaleSetId: string): Promise<ScaleSetStatus> {
    this.state.bind(scaleSetId);
    await this.reconcile("admin");
    return this.status(scaleSetId);
  }

  async status(scaleSetId: string): Promise<ScaleSetStatus> {
    const known = this.state.scaleSetId;
    if (known && known !== scaleSetId) throw new Error(`this object belongs to scale set ${known}`);
    return objectStatus({
      state: this.state,
      nextWake: await this.ctx.storage.getAlarm(),
      createBackoffIntervalMs: this.settings.createBackoff.intervalMs,
      listener: this.listener.status(),
      poller: this.poller.status(),
      invocations: this.invocations.status(),
    });
  }

  /** Lifts the create backoff and the hard limit. */
  async resetBackoff(scaleSetId: string): Promise<ScaleSetStatus> {
    this.state.bind(scaleSetId);
    this.state.createBackoff = NO_CREATE_BACKOFF;
    this.state.hardLimitVersion = null;
    log({ event: "create_backoff_reset", scale_set: scaleSetId });
    await this.nudge(scaleSetId);
    return this.status(scaleSetId);
  }

  /** Sends an instance to deletion; `force` ignores provider errors. Returns the status it moved to. */
  async deleteInstance(scaleSetId: string, name: string, force: boolean): Promise<{ status: InstanceStatus } | { error: string }> {
    this.state.bind(scaleSetId);
    const row = await findInstance(this.env.DB, name, scaleSetId);
    if (!row) return { error: "not_found" };
    const to: InstanceStatus = force ? "pending_force_delete" : "pending_delete";
    if (row.status === to || (row.status === "deleting" && !force)) return { status: row.status };
    if (!canTransition(row.status, to)) return { error: `instance is ${row.status}` };
    if (force) this.state.updateOps(name, { retryAt: null });
    const applied = await applyStatusChanges(this.env.DB, [
      { id: row.id, from: row.status, to, reason: force ? "force delete requested by admin" : "delete requested by admin", at: Date.now() },
    ]);
    if (!applied.size) return { error: "instance changed concurrently; try again" };
    const line = { event: "instance_transition", scale_set: scaleSetId, instance: name, from: row.status, to, reason: "admin" };
    logAt(transitionLevel(row.status, to), line);
    await this.nudge(scaleSetId);
    return { status: to };
  }

  /** A shim finished an asynchronous operation. */
  async providerCallback(cb: ShimCallback): Promise<{ accepted: boolean; reason?: string }> {
    const scaleSetId = this.state.scaleSetId;
    if (!scaleSetId) return { accepted: false, reason: "unknown scale set" };
    const ops = this.state.ops(cb.instance_name);
    if (!ops?.opId || ops.opId !== cb.operation_id) return { accepted: false, reason: "no such operation pending" };
    const row = await findInstance(this.env.DB, cb.instance_name, scaleSetId);
    if (!row) return { accepted: false, reason: "unknown instance" };
    const now = Date.now();
    const { result, error } = callbackResult(cb);
    const outcome = operationOutcome({ kind: ops.opKind!, row, result, error, deleteAttempts: ops.deleteAttempts, now });
    const policy = this.settings.createBackoff;
    keepCreateBackoff(this.state, scaleSetId, null, afterCreate(this.state.createBackoff, outcome.create, now, policy), policy, now);
    const change = keepOutcome(this.state, scaleSetId, cb.instance_name, outcome);
    await applyStatusChanges(this.env.DB, change ? [change] : []);
    log({ event: "provider_callback", scale_set: scaleSetId, instance: cb.instance_name, operation: ops.opKind, ok: !cb.error });
    await this.nudge(scaleSetId);
    return { accepted: true };
  }

  /**
   * A runner reports on its bootstrap (through the callback routes). `idle` makes it count as
   * available at once; `failed` sends the instance to deletion. The route checked only the token
   * (these arguments): the instance is checked here, on the report's one read (runner/instance-access.ts).
   */
  async runnerReport(
    scaleSetId: string,
    name: string,
    createAttempt: number,
    report: RunnerReport,
  ): Promise<{ ok: true } | RunnerReportRefusal> {
    // One report at a time: each is checked against the runner status the previous one left
    // (the D1 write below guards the instance status only).
    const turn = this.reports.then(() => this.applyRunnerReport(scaleSetId, name, createAttempt, report));
    this.reports = turn.catch(() => undefined);
    return turn;
  }

  private reports: Promise<unknown> = Promise.resolve();

  private async applyRunnerReport(
    scaleSetId: string,
    name: string,
    createAttempt: number,
    report: RunnerReport,
  ): Promise<{ ok: true } | RunnerReportRefusal> {
    const claims = { ss: scaleSetId, att: createAttempt };
    const now = Date.now();
    // Read (across scale sets, so a refusal names the same reason the routes' check would) and
    // written in one round trip: the change is decided in advance for each row it may find.
    const { instance: row, applied } = await readAndApplyRunnerReport(this.env.DB, name, reportChangesInAdvance(claims, report, now));
    const refusal = instanceRefusal(row, claims);
    if (refusal || !row) return { error: "unauthorized", reason: refusal ?? "no such instance" };
    this.state.bind(scaleSetId);
    // The same decision for the row read: the change written with it, if one was.
    const verdict = runnerReportChange(row, createAttempt, report, now);
    if ("error" in verdict) return verdict;
    // A row none of the changes was decided for (a runner id GitHub gave otherwise): written apart, as before.
    if (!applied && !(await applyStatusChanges(this.env.DB, [verdict.change])).size) return { error: "gone" };
    for (const { level, fields } of runnerReportEvents({ scaleSetId, instance: name }, row, report, verdict)) logAt(level, fields);
    if (report.status === "failed" || report.status === "idle") await this.nudge(scaleSetId);
    return { ok: true };
  }

  /** Takes the scale set API listener's next step now, ignoring its backoff (tests, operators); then reconciles. */
  async listenNow(scaleSetId: string): Promise<ScaleSetStatus> {
    this.state.bind(scaleSetId);
    await this.listen(true);
    await this.arm();
    return this.status(scaleSetId);
  }

  /** Polls Forgejo for waiting jobs now, ignoring the poller's backoff (tests, operators); then reconciles if jobs came or went. */
  async pollNow(scaleSetId: string): Promise<ScaleSetStatus> {
    this.state.bind(scaleSetId);
    await this.poller.tick(scaleSetId, true, () => this.reconcile("poller"));
    await this.arm();
    return this.status(scaleSetId);
  }

  // ---- alarm ------------------------------------------------------------------------------
  override async alarm(): Promise<void> {
    // Never throw: a throwing alarm is retried a few times and then dropped. Errors are
    // recorded, and the object re-arms itself for its next tick either way.
    try {
      await this.reconcile("alarm");
    } catch (err) {
      log({ event: "reconcile_failed", scale_set: this.state.scaleSetId, error: errorText(err) });
      this.state.setTimer("retry", Date.now() + 5_000);
    }
    await this.listen(false);
    const id = this.state.scaleSetId;
    if (id) await asKind("forgejo_poll", () => this.poller.tick(id, false, () => this.reconcile("poller")));
    await this.arm();
    if (!recoveryPoked) {
      recoveryPoked = true;
      await pokeRecovery(this.env);
    }
  }

  /** The scale set API listener's step, when one is due (or `force`d); a message that changed anything is reconciled at once. */
  private async listen(force: boolean): Promise<void> {
    const scaleSetId = this.state.scaleSetId;
    if (scaleSetId) await asKind("listener", () => this.listener.tick(scaleSetId, force, () => this.reconcile("listener")));
  }

  private async arm(): Promise<void> {
    if (!this.state.scaleSetId) return;
    const due = this.state.nextDue();
    const current = await this.ctx.storage.getAlarm();
    if (due === null) {
      if (current !== null) {
        await this.ctx.storage.deleteAlarm();
        meterStorageRows(0, 1);
      }
      return;
    }
    if (current === null || current !== due) {
      await this.ctx.storage.setAlarm(due);
      meterStorageRows(0, 1);
    }
  }

  // ---- reconciliation ---------------------------------------------------------------------

  /** Runs reconciliation, coalescing overlapping requests into more passes (run-coalescer.ts). */
  private reconcile(trigger: string): Promise<void> {
    return this.runs.run({
      pass: () => {
        // The pass's own share of its invocation: every fetch and D1 call made under it.
        const cost = noCost();
        return measure(cost, () => this.pass.run(trigger, cost), "reconcile");
      },
      after: () => this.runRecord.finish(),
      done: async (leftOver) => {
        this.runRecord.end();
        if (!leftOver) return;
        this.state.setTimer("nudge", Date.now());
        await this.arm();
      },
    });
  }
}

// Each RPC and the alarm is one invocation with its own budgets (invocation-record.ts).
const RPC = [
  "nudge",
  "reconcileNow",
  "status",
  "resetBackoff",
  "deleteInstance",
  "providerCallback",
  "runnerReport",
  "listenNow",
  "pollNow",
] as const;
measureInvocations(ScaleSet, [...RPC, "alarm"]);
