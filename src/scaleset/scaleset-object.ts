import { DurableObject } from "cloudflare:workers";
import type { Env } from "../env";
import { mapLimit } from "../lib/map-limit";
import { countingD1 } from "../db/counting-d1";
import { validateProviderInstance, type ShimCallback } from "../providers/shim-protocol";
import { keyringFor } from "../crypto/keyring";
import { open, seal } from "../crypto/secret-box";
import { secretContext } from "../crypto/secret-contexts";
import { applyJobCorrections, loadScaleSetSnapshot, type InstanceRecord, type ScaleSetRecord } from "../db/scaleset-store";
import { applyStatusChanges, findInstance, insertInstancesStatements, liveInstanceNames, type NewInstance, type StatusChange } from "../db/instance-store";
import type { InstanceStatus, RunnerStatus } from "../db/schema";
import { deleteRetryDelay, NO_CREATE_BACKOFF, recordCreateFailure, recordCreateSuccess } from "./backoff";
import { buildBootstrapInstance } from "./bootstrap";
import { canRunnerTransition, canTransition } from "./instance-states";
import { mintInstanceToken } from "./instance-token";
import { ObjectState, type LastReconcile } from "./object-state";
import type { MachineInfo, MachinePort, PortError, RunnerPort } from "./ports";
import { createScaleSetPorts, githubRunnerPort } from "./ports-factory";
import { pickStaleJobs, staleJobVerdict, type QueuedJob } from "./stale-jobs";
import { plan, type Action, type PlanInstance } from "./reconcile";
import { runnerName } from "./runner-names";
import { claimOnReport, removeInstanceRunner } from "./runner-identity";
import { scaleSetSettings, type ScaleSetSettings } from "./settings";
import { logEvent as log } from "../observability/log";
import { counterName, countReconcile, flushCounters, hasPendingCalls, setCounterStatement } from "../observability/op-counters";


export interface ScaleSetStatus {
  scale_set_id: string | null;
  next_wake_at: string | null;
  create_backoff: { failures: number; last_failure_at: string | null; hard_limited_at: string | null; create_allowed_at: string | null };
  last_reconcile: LastReconcile | null;
  pending_operations: number;
  delete_retries: number;
}

/** How long a pass waits for its shim creates before leaving them to finish on their own. */
const CREATE_WAIT_MS = 2_000;

type CreateResult = Awaited<ReturnType<MachinePort["createInstance"]>>;
/** A shim's answer to one create, with what the pass knows of the instance. */
type CreateOutcome<T> = { x: T; r: CreateResult };


const errorText = (e: unknown) => (e instanceof Error ? e.message : String(e));
const faultOf = (e: PortError) => `${e.kind}${e.status ? ` (${e.status})` : ""}: ${e.message}`.slice(0, 2000);


/**
 * One object per scale set, the single writer of its instances' lifecycle. Woken by nudges
 * (webhooks, admin changes), a periodic tick, and due timers, all through one alarm. Each run
 * loads a snapshot in one D1 round trip, plans with the pure planner, and carries the plan
 * out with a fixed number of further round trips; outbound calls run in parallel in between.
 */
export class ScaleSet extends DurableObject<Env> {
  private readonly state: ObjectState;
  private readonly settings: ScaleSetSettings;
  /** Instances with an operation of this incarnation under way: nobody else may touch them. */
  private readonly inFlight = new Set<string>();
  private running: Promise<void> | null = null;
  /** When this incarnation started: rows left mid-way before it belong to a process that is gone. */
  private readonly startedAt = Date.now();
  /** Totals of the reconcile run under way (one run is up to a few passes). */
  private run: { at: number; started: number; actions: Record<string, number>; trips: number; passes: number; error: string | null } | null = null;
  private rerun = false;
  /** Counters go to D1 at the end of a run that called out or changed the desired count, else at most once a minute. */
  private countersFlushedAt = 0;
  private desiredWritten: number | null = null;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.state = new ObjectState(ctx.storage.sql);
    this.settings = scaleSetSettings(env);
  }

  // ---- RPC ------------------------------------------------------------------------------

  /** Something changed (a job arrived, the scale set was edited): reconcile as soon as possible. */
  async nudge(scaleSetId: string): Promise<void> {
    this.state.bind(scaleSetId);
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
    const b = this.state.createBackoff;
    const iso = (t: number | null) => (t === null ? null : new Date(t).toISOString());
    const ops = [...this.state.allOps().values()];
    const next = await this.ctx.storage.getAlarm();
    return {
      scale_set_id: known,
      next_wake_at: iso(next),
      create_backoff: {
        failures: b.failures,
        last_failure_at: iso(b.lastFailureAt),
        hard_limited_at: iso(b.hardLimitedAt),
        create_allowed_at:
          b.hardLimitedAt !== null ? null : iso(b.failures && b.lastFailureAt ? b.lastFailureAt + b.failures * this.settings.createBackoff.intervalMs : null),
      },
      last_reconcile: this.state.lastReconcile,
      pending_operations: ops.filter((o) => o.opId).length,
      delete_retries: ops.filter((o) => o.retryAt !== null).length,
    };
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
    log({ event: "instance_transition", scale_set: scaleSetId, instance: name, from: row.status, to, reason: "admin" });
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
    // GARM's validity rule: a result without provider id, name or a known status is a fault, not a machine.
    let result: MachineInfo | null = null;
    let error = cb.error;
    if (cb.result) {
      const valid = validateProviderInstance(cb.result);
      if (valid.ok) result = valid.value;
      else error = { message: `malformed result: ${valid.problems.join("; ")}`, retryable: false };
    }
    const change = this.operationOutcome(ops.opKind!, cb.instance_name, row, result, error, now);
    await applyStatusChanges(this.env.DB, change ? [change] : []);
    log({ event: "provider_callback", scale_set: scaleSetId, instance: cb.instance_name, operation: ops.opKind, ok: !cb.error });
    await this.nudge(scaleSetId);
    return { accepted: true };
  }

  /**
   * A runner reports on its bootstrap (through the callback routes). `idle` makes it count as
   * available at once; `failed` sends the instance to deletion.
   */
  async runnerReport(
    scaleSetId: string,
    name: string,
    createAttempt: number,
    report: { status: RunnerStatus; message: string; agentId: number | null },
  ): Promise<{ ok: true } | { error: "gone" } | { error: "forbidden"; from: RunnerStatus; to: RunnerStatus }> {
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
    report: { status: RunnerStatus; message: string; agentId: number | null },
  ): Promise<{ ok: true } | { error: "gone" } | { error: "forbidden"; from: RunnerStatus; to: RunnerStatus }> {
    this.state.bind(scaleSetId);
    const row = await findInstance(this.env.DB, name, scaleSetId);
    if (!row || row.createAttempt !== createAttempt || (row.status !== "creating" && row.status !== "running")) return { error: "gone" };
    if (!canRunnerTransition(row.runnerStatus, report.status)) return { error: "forbidden", from: row.runnerStatus, to: report.status };
    const claim = claimOnReport(row.agentId, report.agentId);
    const failed = report.status === "failed";
    const message = report.message.slice(0, 2000);
    const applied = await applyStatusChanges(this.env.DB, [
      {
        id: row.id,
        from: row.status,
        to: failed ? "pending_delete" : row.status,
        reason: failed ? `runner failed: ${message}` : message || `runner ${report.status}`,
        at: Date.now(),
        set: {
          runnerStatus: report.status,
          statusMessage: message,
          recordRunnerReport: true,
          // Kept apart from GitHub's id: removal confirms it at GitHub first (runner-identity.ts).
          ...(claim.record !== null && { reportedAgentId: claim.record }),
        },
      },
    ]);
    if (!applied.size) return { error: "gone" };
    log({ event: "runner_status", scale_set: scaleSetId, instance: name, from: row.runnerStatus, to: report.status, message, reported_agent_id: report.agentId });
    if (claim.rejected) {
      log({ event: "runner_id_claim_rejected", scale_set: scaleSetId, instance: name, runner_id: report.agentId, reason: "GitHub gave this runner another id", agent_id: row.agentId });
    }
    if (failed || report.status === "idle") await this.nudge(scaleSetId);
    return { ok: true };
  }

  // ---- alarm ------------------------------------------------------------------------------

  override async alarm(): Promise<void> {
    // Never throw: a throwing alarm is retried a few times and then dropped. Errors are
    // recorded, and the object re-arms itself for its next tick either way.
    try {
      await this.reconcile("alarm");
    } catch (e) {
      log({ event: "reconcile_failed", scale_set: this.state.scaleSetId, error: errorText(e) });
      this.state.setTimer("retry", Date.now() + 5_000);
    }
    await this.arm();
  }

  private async arm(): Promise<void> {
    if (!this.state.scaleSetId) return;
    const due = this.state.nextDue();
    const current = await this.ctx.storage.getAlarm();
    if (due === null) {
      if (current !== null) await this.ctx.storage.deleteAlarm();
      return;
    }
    if (current === null || current !== due) await this.ctx.storage.setAlarm(due);
  }

  // ---- reconciliation ---------------------------------------------------------------------

  /** Runs reconciliation, coalescing overlapping requests into one more pass. */
  private async reconcile(trigger: string): Promise<void> {
    if (this.running) {
      this.rerun = true;
      return this.running;
    }
    this.running = (async () => {
      try {
        let passes = 0;
        do {
          this.rerun = false;
          const acted = await this.pass(trigger);
          // Marks and failures change what the next plan sees: go again at once, boundedly.
          if (acted) this.rerun = true;
        } while (this.rerun && ++passes < 4);
        await this.afterRun();
      } finally {
        this.running = null;
        this.run = null;
      }
    })();
    return this.running;
  }

  /** Logs the run and records it for /metrics, batching the counter writes (see observability/op-counters.ts). */
  private async afterRun(): Promise<void> {
    const scaleSetId = this.state.scaleSetId;
    const last = this.state.lastReconcile;
    if (!scaleSetId || !this.run || !last) return;
    log({
      event: "reconciled",
      scale_set: scaleSetId,
      duration_ms: last.durationMs,
      d1_round_trips: last.d1RoundTrips,
      passes: last.passes,
      actions: last.actions,
      ...(last.error !== null && { error: last.error }),
    });
    countReconcile(scaleSetId, last.durationMs);
    const desired = last.summary?.desired ?? null;
    const now = Date.now();
    const desiredChanged = desired !== null && desired !== this.desiredWritten;
    if (!desiredChanged && !hasPendingCalls() && now - this.countersFlushedAt < 60_000) return;
    this.countersFlushedAt = now;
    await flushCounters(this.env.DB, desiredChanged ? [setCounterStatement(this.env.DB, counterName("scaleset.desired", scaleSetId), desired!, now)] : []);
    if (desiredChanged) this.desiredWritten = desired;
  }

  /** One reconcile pass. Returns whether it changed anything. */
  private async pass(trigger: string): Promise<boolean> {
    const scaleSetId = this.state.scaleSetId;
    if (!scaleSetId) return false;
    const started = Date.now();
    const trips = { n: 0 };
    const db = countingD1(this.env.DB, trips);
    this.state.setTimer("nudge", null);
    this.state.setTimer("retry", null);

    const rows = await loadScaleSetSnapshot(db, scaleSetId);
    const ss = rows.scaleSet;
    if (!ss) {
      // The scale set is gone (its API delete checks no instances are live): forget everything.
      log({ event: "scaleset_object_cleared", scale_set: scaleSetId });
      this.state.clear();
      await this.ctx.storage.deleteAlarm();
      return false;
    }

    let backoff = this.state.createBackoff;
    const limitVersion = this.state.hardLimitVersion;
    if (backoff.hardLimitedAt !== null && limitVersion !== null && ss.updatedAt > limitVersion) {
      backoff = NO_CREATE_BACKOFF;
      this.state.createBackoff = backoff;
      this.state.hardLimitVersion = null;
      log({ event: "hard_limit_lifted", scale_set: ss.id, reason: "scale set updated" });
    }

    this.state.pruneOps(new Set(rows.instances.map((i) => i.name)));
    const ops = this.state.allOps();
    const now = Date.now();
    const instances: PlanInstance[] = rows.instances.map((i) => {
      const o = ops.get(i.name);
      return {
        name: i.name,
        status: i.status,
        runnerStatus: i.runnerStatus,
        createdAt: i.createdAt,
        statusChangedAt: i.statusChangedAt,
        idleSince: i.runnerStatus === "idle" ? (i.runnerStatusChangedAt ?? i.statusChangedAt) : null,
        jobStatus: i.jobStatus,
        retryAt: o?.retryAt ?? null,
        inFlight: this.inFlight.has(i.name),
        awaiting: o?.opId && o.opKind ? { kind: o.opKind, pollAt: o.pollAt ?? now } : null,
      };
    });
    const result = plan({
      config: {
        enabled: ss.enabled,
        minIdleRunners: ss.minIdleRunners,
        maxRunners: ss.maxRunners,
        bootstrapTimeoutMs: ss.bootstrapTimeout * 60_000,
        scaleDownIdleMs: this.settings.scaleDownIdleMs,
        operationPollMs: this.settings.operationPollMs,
        stuckGraceMs: this.settings.stuckGraceMs,
        startedAt: this.startedAt,
        createBackoff: this.settings.createBackoff,
      },
      instances,
      queuedJobs: rows.queuedJobs,
      createBackoff: backoff,
      now,
    });
    log({ event: "plan", scale_set: ss.id, trigger, ...result.summary, actions: result.actions.length });

    let error: string | null = null;
    try {
      // Drift is judged against this snapshot, before the plan adds anything the cloud cannot know yet.
      if (now - this.state.lastOrphanCheck >= this.settings.orphanCheckMs) await this.checkDrift(db, ss, rows.instances);
      if (result.actions.length) await this.apply(db, ss, rows.instances, result.actions);
      // Lost webhooks: jobs GitHub has long started or finished must stop asking for runners.
      if ((await this.recheckStaleJobs(db, ss, rows.oldestQueued)) > 0) this.rerun = true;
    } catch (e) {
      error = errorText(e);
      log({ event: "reconcile_error", scale_set: ss.id, error });
    }

    const run = this.run ?? { at: now, started, actions: {}, trips: 0, passes: 0, error: null };
    for (const a of result.actions) run.actions[a.type] = (run.actions[a.type] ?? 0) + (a.type === "create" ? a.count : 1);
    run.trips += trips.n;
    run.passes++;
    run.error = run.error ?? error;
    this.run = run;
    this.state.lastReconcile = {
      at: run.at,
      durationMs: Date.now() - run.started,
      summary: result.summary,
      actions: run.actions,
      error: run.error,
      d1RoundTrips: run.trips,
      passes: run.passes,
    };
    this.state.setTimer("tick", Date.now() + this.settings.tickMs);
    this.state.setTimer("wake", result.wakeAt);
    return result.actions.length > 0;
  }

  private ports(ss: ScaleSetRecord, providerSecret: string): Promise<{ machines: MachinePort; runners: RunnerPort }> {
    return createScaleSetPorts(this.env, ss, providerSecret);
  }

  /** Carries out a plan: a fixed number of D1 batches, outbound calls in parallel between them. */
  private async apply(db: D1Database, ss: ScaleSetRecord, rows: InstanceRecord[], actions: Action[]): Promise<void> {
    const keyring = await keyringFor(this.env);
    const providerSecret = await open(keyring, ss.provider.secretEnc, secretContext.provider(ss.provider.id));
    const { machines, runners } = await this.ports(ss, providerSecret);
    const byName = new Map(rows.map((r) => [r.name, r]));
    const now = Date.now();
    const c = this.settings.concurrency;
    const background = new Set<string>();

    // Batch 1: marks, and new rows as pending_create (so overlapping passes cannot double-create).
    const marks: StatusChange[] = [];
    for (const a of actions) {
      if (a.type !== "mark_delete") continue;
      const r = byName.get(a.instance)!;
      marks.push({ id: r.id, from: r.status, to: "pending_delete", reason: a.reason, at: now });
    }
    const createCount = actions.reduce((n, a) => n + (a.type === "create" ? a.count : 0), 0);
    const fresh: NewInstance[] = Array.from({ length: createCount }, () => ({
      id: crypto.randomUUID(),
      name: runnerName(ss.runnerPrefix),
      scaleSetId: ss.id,
      osType: ss.osType,
      osArch: ss.osArch,
      createdAt: now,
    }));
    const deletes = actions.filter((a): a is Extract<Action, { type: "delete" }> => a.type === "delete").map((a) => ({ ...a, row: byName.get(a.instance)! }));
    const polls = actions.filter((a): a is Extract<Action, { type: "poll" }> => a.type === "poll").map((a) => ({ ...a, row: byName.get(a.instance)! }));
    for (const n of [...fresh.map((f) => f.name), ...deletes.map((d) => d.instance), ...polls.map((p) => p.instance)]) this.inFlight.add(n);

    try {
      if (marks.length || fresh.length) {
        await applyStatusChanges(db, marks, insertInstancesStatements(db, fresh, "created to meet demand"));
        for (const m of marks) log({ event: "instance_transition", scale_set: ss.id, instance: rowName(rows, m.id), from: m.from, to: m.to, reason: m.reason });
      }

      // Outbound, phase 1: JIT configs for new runners, GitHub removal before deleting, polls.
      const tools = fresh.length ? await runners.runnerDownloads().catch(() => []) : [];
      // Without JIT the machine registers itself with a one-time registration token (metadata route).
      const jit = await mapLimit(fresh, c, async (f) => {
        if (!ss.jitConfigEnabled) return { ok: true as const, runnerId: null, encodedJitConfig: null };
        try {
          const cfg = await runners.createJitRunner({ name: f.name, labels: ss.labels, runnerGroup: ss.runnerGroup });
          return { ok: true as const, ...cfg };
        } catch (e) {
          return { ok: false as const, error: errorText(e) };
        }
      });
      const removals = await mapLimit(deletes, c, async (d) => {
        try {
          const out = await removeInstanceRunner(runners, d.row);
          if (out.rejectedClaim) {
            log({
              event: "runner_id_claim_rejected",
              scale_set: ss.id,
              instance: d.instance,
              runner_id: out.rejectedClaim.runnerId,
              runner_name: out.rejectedClaim.runnerName,
              reason: "GitHub has that id under another runner's name",
            });
          }
          return out;
        } catch (e) {
          // Without GitHub we cannot know the runner is idle; a forced delete goes on regardless.
          return d.force ? ({ removal: "gone", confirmedId: null, rejectedClaim: null } as const) : "error:" + errorText(e);
        }
      });
      const polled = await mapLimit(polls, c, (p) => machines.getInstance(p.row.providerId ?? p.instance));

      // Batch 2: new rows to creating (with their sealed JIT config) or error; deletes to deleting; poll results.
      const t2 = Date.now();
      const batch2: StatusChange[] = [];
      const toCreate: { f: NewInstance; token: string }[] = [];
      for (const [i, f] of fresh.entries()) {
        const j = jit[i]!;
        if (!j.ok) {
          batch2.push({ id: f.id, from: "pending_create", to: "error", reason: "GitHub JIT config failed", at: t2, set: { providerFault: `github: ${j.error}`.slice(0, 2000) } });
          continue;
        }
        const sealed = j.encodedJitConfig === null ? null : await seal(keyring, j.encodedJitConfig, secretContext.jitConfig(f.id));
        const token = await mintInstanceToken(
          this.env.INSTANCE_TOKEN_SECRET,
          { instance: f.name, scaleSetId: ss.id, createAttempt: 1, bootstrapTimeoutMinutes: ss.bootstrapTimeout },
          t2,
        );
        batch2.push({
          id: f.id,
          from: "pending_create",
          to: "creating",
          reason: "calling provider",
          at: t2,
          set: sealed === null || j.runnerId === null ? {} : { agentId: j.runnerId, jitConfigEnc: sealed },
        });
        toCreate.push({ f, token });
      }
      const toDelete: typeof deletes = [];
      for (const [i, d] of deletes.entries()) {
        const out = removals[i]!;
        if (typeof out === "string") {
          this.scheduleDeleteRetry(d.instance);
          log({ event: "delete_deferred", scale_set: ss.id, instance: d.instance, error: out.slice(6) });
          continue;
        }
        // The runner id GitHub just vouched for is recorded as the instance's own.
        const set = out.confirmedId === null ? undefined : { agentId: out.confirmedId };
        if (out.removal === "busy") {
          batch2.push({ id: d.row.id, from: d.row.status, to: "running", reason: "runner took a job before it could be removed; kept", at: t2, set });
        } else {
          batch2.push({ id: d.row.id, from: d.row.status, to: "deleting", reason: d.force ? "force deleting" : "deleting", at: t2, set });
          toDelete.push(d);
        }
      }
      for (const [i, p] of polls.entries()) {
        const change = this.pollOutcome(p.row, polled[i]!, t2);
        if (change) batch2.push(change);
      }
      const applied2 = await applyStatusChanges(db, batch2);

      // Outbound, phase 2: the provider creates and deletes.
      const creating = toCreate.filter((x) => applied2.has(x.f.id));
      const deleting = toDelete.filter((d) => applied2.has(d.row.id));
      // Creates settle in the background: a slow or hung shim call (up to its timeout) must not hold
      // up this scale set's deletes and later passes. The pass waits for them only briefly.
      const creates = this.settleCreates(db, ss, creating, (x) =>
        machines.createInstance(buildBootstrapInstance({ scaleSet: ss, name: x.f.name, token: x.token, publicUrl: this.env.PUBLIC_URL, tools })),
      );
      for (const x of creating) background.add(x.f.name);
      const deleted = await mapLimit(deleting, c, (d) => machines.deleteInstance(d.row.providerId ?? d.instance));

      // Batch 3: what the provider said about deletes (creates: settleCreates).
      const t3 = Date.now();
      const batch3: StatusChange[] = [];
      for (const [i, d] of deleting.entries()) {
        const r = deleted[i]!;
        if (r.ok && r.value.state === "accepted") {
          this.state.updateOps(d.instance, { opId: r.value.operationId, opKind: "delete", pollAt: t3 + this.settings.operationPollMs, retryAt: null });
        } else if (r.ok || d.force) {
          batch3.push({ id: d.row.id, from: "deleting", to: "deleted", reason: r.ok ? "provider deleted the machine" : `forced past provider error: ${faultOf(r.error)}`, at: t3 });
        } else {
          const attempts = this.scheduleDeleteRetry(d.instance);
          batch3.push({ id: d.row.id, from: "deleting", to: "pending_delete", reason: `delete failed (attempt ${attempts})`, at: t3, set: { providerFault: faultOf(r.error) } });
        }
      }
      await applyStatusChanges(db, batch3);
      for (const ch of [...batch2, ...batch3]) {
        log({ event: "instance_transition", scale_set: ss.id, instance: rowName(rows, ch.id) ?? fresh.find((f) => f.id === ch.id)?.name, from: ch.from, to: ch.to, reason: ch.reason });
      }
      await creates;
    } finally {
      // Names whose create is still under way stay in flight until settleCreates is done with them.
      for (const n of [...fresh.map((f) => f.name), ...deletes.map((d) => d.instance), ...polls.map((p) => p.instance)]) {
        if (!background.has(n)) this.inFlight.delete(n);
      }
    }
  }

  /** Asks GitHub about the oldest queued jobs and moves forward those it has started or finished. */
  private async recheckStaleJobs(db: D1Database, ss: ScaleSetRecord, oldest: QueuedJob[]): Promise<number> {
    const now = Date.now();
    const picked = pickStaleJobs(oldest, this.state.jobChecks(), now, this.settings.staleJobs);
    if (!picked.length) return 0;
    const github = githubRunnerPort(this.env, ss.entity);
    const answers = await mapLimit(picked, this.settings.concurrency, (j) => github.jobStatus(j.repository, j.id).catch(() => null));
    const corrections = picked.flatMap((j, i) => {
      const verdict = staleJobVerdict(answers[i]!);
      return verdict ? [{ id: j.id, ...verdict }] : [];
    });
    await applyJobCorrections(db, corrections, now);
    this.state.recordJobChecks(
      picked.map((j) => j.id),
      now,
      new Set(oldest.map((j) => j.id)),
    );
    for (const c of corrections) log({ event: "stale_job_corrected", scale_set: ss.id, job_id: c.id, status: c.status });
    return corrections.length;
  }

  /**
   * Runs the provider creates and records what the shim said (batch 3 for creates). Answers that
   * come within the pass's wait (CREATE_WAIT_MS) are written together (one D1 batch however many); later ones are
   * written as they come, so one hung create does not hide the others' machines until it times
   * out. A late outcome (a failure to replace, a backoff) needs a new plan: each late write is
   * followed by a reconcile.
   */
  private settleCreates<T extends { f: NewInstance }>(
    db: D1Database,
    ss: ScaleSetRecord,
    creating: T[],
    create: (x: T) => Promise<CreateResult>,
  ): Promise<void> {
    if (!creating.length) return Promise.resolve();
    const ready: CreateOutcome<T>[] = [];
    let late = false;
    let writing: Promise<void> = Promise.resolve();
    let queued = false;
    const flush = (): Promise<void> => {
      if (queued) return writing;
      queued = true;
      writing = writing.then(async () => {
        queued = false;
        const group = ready.splice(0);
        if (!group.length) return;
        try {
          await this.recordCreates(db, ss, group);
        } catch (e) {
          // The rows stay `creating`; the stuck check asks the shim about them later.
          log({ event: "create_settle_failed", scale_set: ss.id, error: errorText(e) });
        } finally {
          for (const o of group) this.inFlight.delete(o.x.f.name);
        }
        if (late) void this.reconcile("create_settled").then(() => this.arm()).catch(() => {});
      });
      return writing;
    };
    const window = new Promise<void>((r) => setTimeout(r, CREATE_WAIT_MS));
    const all = mapLimit(creating, this.settings.concurrency, async (x) => {
      try {
        ready.push({ x, r: await create(x) });
      } catch (e) {
        // The row stays `creating`; the stuck check asks the shim about it later.
        this.inFlight.delete(x.f.name);
        log({ event: "create_settle_failed", scale_set: ss.id, instance: x.f.name, error: errorText(e) });
        return;
      }
      if (late) void flush();
    });
    const windowed = window.then(() => {
      late = true;
      return flush();
    });
    // The pass waits for what came within the window to be recorded, never for the stragglers.
    return Promise.race([all.then(() => flush()), windowed]);
  }

  private async recordCreates(db: D1Database, ss: ScaleSetRecord, outcomes: CreateOutcome<{ f: NewInstance }>[]): Promise<void> {
    const t3 = Date.now();
    const batch3: StatusChange[] = [];
    let backoff = this.state.createBackoff;
    for (const { x, r } of outcomes) {
      if (!r.ok) {
        backoff = recordCreateFailure(backoff, t3, this.settings.createBackoff);
        batch3.push({ id: x.f.id, from: "creating", to: "error", reason: "provider create failed", at: t3, set: { providerFault: faultOf(r.error) } });
        log({ event: "create_failed", scale_set: ss.id, instance: x.f.name, error: faultOf(r.error), failures: backoff.failures });
      } else if (r.value.state === "accepted") {
        backoff = recordCreateSuccess(backoff);
        this.state.updateOps(x.f.name, { opId: r.value.operationId, opKind: "create", pollAt: t3 + this.settings.operationPollMs });
      } else {
        backoff = recordCreateSuccess(backoff);
        batch3.push(this.machineChange(x.f.id, "creating", r.value.instance, t3, "provider created the machine"));
      }
    }
    if (backoff.hardLimitedAt !== null && this.state.createBackoff.hardLimitedAt === null) {
      this.state.hardLimitVersion = ss.updatedAt;
      log({ event: "hard_limit_hit", scale_set: ss.id, failures: backoff.failures, error: "creation stopped after too many straight failures" });
    } else if (backoff.hardLimitedAt === null && backoff.failures > this.state.createBackoff.failures && backoff.lastFailureAt !== null) {
      const allowedAt = backoff.lastFailureAt + backoff.failures * this.settings.createBackoff.intervalMs;
      log({ event: "backoff_armed", scale_set: ss.id, kind: "create", failures: backoff.failures, delay_ms: allowedAt - t3 });
    }
    this.state.createBackoff = backoff;
    await applyStatusChanges(db, batch3);
    for (const ch of batch3) {
      log({ event: "instance_transition", scale_set: ss.id, instance: outcomes.find((o) => o.x.f.id === ch.id)?.x.f.name, from: ch.from, to: ch.to, reason: ch.reason });
    }
  }

  private scheduleDeleteRetry(instance: string): number {
    const attempts = (this.state.ops(instance)?.deleteAttempts ?? 0) + 1;
    const delay = deleteRetryDelay(attempts);
    this.state.updateOps(instance, { deleteAttempts: attempts, retryAt: Date.now() + delay });
    log({ event: "backoff_armed", scale_set: this.state.scaleSetId, kind: "delete", instance, attempt: attempts, delay_ms: delay });
    return attempts;
  }

  private machineChange(id: string, from: InstanceStatus, m: MachineInfo, at: number, reason: string): StatusChange {
    const to: InstanceStatus = m.status === "running" ? "running" : m.status === "stopped" ? "stopped" : m.status === "error" ? "error" : "unknown";
    return {
      id,
      from,
      to,
      reason: to === "error" ? "provider reported an error" : reason,
      at,
      set: {
        providerId: m.provider_id,
        ...(m.addresses && { addresses: m.addresses }),
        ...(m.os_type && { osType: m.os_type }),
        ...(m.os_name && { osName: m.os_name }),
        ...(m.os_version && { osVersion: m.os_version }),
        ...(m.os_arch && { osArch: m.os_arch }),
        ...(m.provider_fault && { providerFault: m.provider_fault }),
      },
    };
  }

  /** What an async operation's result (callback or poll) means for its instance. */
  private operationOutcome(
    kind: "create" | "delete",
    name: string,
    row: { id: string; status: InstanceStatus },
    result: MachineInfo | null,
    error: { message: string; retryable: boolean } | null,
    now: number,
  ): StatusChange | null {
    this.state.updateOps(name, { opId: null, opKind: null, pollAt: null });
    if (kind === "create") {
      if (row.status !== "creating") return null;
      if (error || !result) {
        this.state.createBackoff = recordCreateFailure(this.state.createBackoff, now, this.settings.createBackoff);
        return { id: row.id, from: "creating", to: "error", reason: "provider create failed", at: now, set: { providerFault: (error?.message ?? "no result").slice(0, 2000) } };
      }
      return this.machineChange(row.id, "creating", result, now, "provider created the machine");
    }
    if (row.status !== "deleting") return null;
    if (error) {
      const attempts = this.scheduleDeleteRetry(name);
      return { id: row.id, from: "deleting", to: "pending_delete", reason: `delete failed (attempt ${attempts})`, at: now, set: { providerFault: error.message.slice(0, 2000) } };
    }
    return { id: row.id, from: "deleting", to: "deleted", reason: "provider deleted the machine", at: now };
  }

  /** Resolves an overdue operation or a row left mid-way by a crash, by asking the shim. */
  private pollOutcome(row: InstanceRecord, r: Awaited<ReturnType<MachinePort["getInstance"]>>, now: number): StatusChange | null {
    const o = this.state.ops(row.name);
    const kind: "create" | "delete" = o?.opKind ?? (row.status === "deleting" ? "delete" : "create");
    if (!r.ok && r.error.kind !== "not_found") {
      // Could not ask; try again later.
      this.state.updateOps(row.name, { pollAt: now + Math.min(this.settings.operationPollMs, 60_000) });
      return null;
    }
    this.state.updateOps(row.name, { opId: null, opKind: null, pollAt: null });
    if (kind === "delete") {
      if (!r.ok) return { id: row.id, from: row.status, to: "deleted", reason: "provider no longer has the machine", at: now };
      return { id: row.id, from: row.status, to: "pending_delete", reason: "machine still exists; deleting again", at: now };
    }
    if (row.status === "pending_create") {
      // Our create was cut off; whatever happened, the machine (if any) goes and a fresh one replaces it.
      return { id: row.id, from: "pending_create", to: "error", reason: "create was interrupted", at: now };
    }
    if (!r.ok) return { id: row.id, from: row.status, to: "error", reason: "provider never created the machine", at: now };
    return this.machineChange(row.id, row.status, r.value, now, "provider reports the machine");
  }

  /** Compares the cloud and GitHub with D1 and removes what only one side knows. */
  private async checkDrift(db: D1Database, ss: ScaleSetRecord, rows: InstanceRecord[]): Promise<void> {
    const now = Date.now();
    this.state.lastOrphanCheck = now;
    const keyring = await keyringFor(this.env);
    const { machines, runners } = await this.ports(ss, await open(keyring, ss.provider.secretEnc, secretContext.provider(ss.provider.id)));
    const listed = await machines.listInstances();
    const known = new Map(rows.map((r) => [r.name, r]));
    const changes: StatusChange[] = [];
    if (listed.ok) {
      const inCloud = new Set(listed.value.map((m) => m.name));
      const orphans = listed.value.filter((m) => !known.has(m.name) && !this.inFlight.has(m.name));
      await mapLimit(orphans, this.settings.concurrency, async (m) => {
        const r = await machines.deleteInstance(m.provider_id || m.name);
        log({ event: "orphan_machine_deleted", scale_set: ss.id, instance: m.name, provider_id: m.provider_id, ok: r.ok });
      });
      const missing = rows.filter(
        (r) => !inCloud.has(r.name) && !this.inFlight.has(r.name) && (r.status === "running" || r.status === "stopped" || r.status === "unknown"),
      );
      const confirmed = await mapLimit(missing, this.settings.concurrency, (r) => machines.getInstance(r.providerId ?? r.name));
      for (const [i, r] of missing.entries()) {
        const c = confirmed[i]!;
        if (!c.ok && c.error.kind === "not_found") {
          changes.push({ id: r.id, from: r.status, to: "pending_delete", reason: "machine is gone from the provider", at: now });
        }
      }
    } else {
      log({ event: "drift_check_failed", scale_set: ss.id, error: faultOf(listed.error) });
    }
    try {
      const ghRunners = await runners.listRunners();
      const prefix = `${ss.runnerPrefix}-`;
      const candidates = ghRunners.filter((r) => r.name.startsWith(prefix) && !known.has(r.name));
      if (candidates.length) {
        // A runner is ours to remove only if no scale set has a live instance by that name.
        const live = await liveInstanceNames(db, candidates.map((r) => r.name));
        await mapLimit(
          candidates.filter((r) => !live.has(r.name) && !r.busy),
          this.settings.concurrency,
          async (r) => {
            const out = await runners.removeRunner(r.id).catch((e) => `error: ${errorText(e)}`);
            log({ event: "orphan_runner_removed", scale_set: ss.id, instance: r.name, runner_id: r.id, result: out });
          },
        );
      }
    } catch (e) {
      log({ event: "drift_check_failed", scale_set: ss.id, error: `github: ${errorText(e)}` });
    }
    if (changes.length) await applyStatusChanges(db, changes);
  }
}

function rowName(rows: InstanceRecord[], id: string): string | undefined {
  return rows.find((r) => r.id === id)?.name;
}
