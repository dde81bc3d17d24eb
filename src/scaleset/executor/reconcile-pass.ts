import { countingD1 } from "../../db/counting-d1";
import { loadScaleSetSnapshot } from "../../db/scaleset/snapshot-store";
import type { PollerHost } from "../../forges/forgejo/poller-host";
import type { InvocationCost } from "../../lib/invocation-cost";
import { errorText, logEvent as log, logAt } from "../../observability/log";
import { hardLimitAgainst, NO_CREATE_BACKOFF } from "../backoff";
import { checkDriftWhenDue } from "../drift";
import { FlavorMemo } from "../flavor-memo";
import { keepSpendGuard } from "../guards/spend-guard-keeping";
import { tickDelay } from "../idle-tick";
import { payForCreates } from "../jit/github-pacing";
import type { ListenerHost } from "../listener/listener-host";
import { passLevel } from "../log-levels";
import { githubRunnerPort, openScaleSetPorts } from "../ports-factory";
import { plan } from "../reconcile";
import { MinIdleKeeper } from "../schedule/min-idle-keeping";
import { awaitingFlavors, judgeShapedQueue } from "../shaped-queue";
import { recheckStaleJobs } from "../stale-jobs/stale-job-recheck";
import type { QueuedJob } from "../stale-jobs/stale-jobs";
import { fitToInvocation } from "./invocation-cap";
import { type ExecutorContext, executePlan } from "./plan-executor";
import { planSnapshot } from "./plan-input";
import type { RunRecord } from "./run-record";

/** What a pass needs of the scale set object it runs in; the object keeps them, the pass only reads and writes through them. */
export interface PassHost {
  executor: ExecutorContext;
  listener: ListenerHost;
  poller: PollerHost;
  runRecord: RunRecord;
  storage: DurableObjectStorage;
  /** The wall clock min idle schedules are read against (the object's, which tests may set). */
  clock(): number;
}

/**
 * One reconcile pass of a scale set object: one snapshot from D1, the pure planner, the plan
 * carried out, then the timers for what comes next. Apart from the object so that its RPC
 * surface and alarm read as the wiring they are; what a pass remembers from one to the next
 * (min idle evaluations, flavors, drift suspects) lives here, per incarnation.
 */
export class ReconcilePass {
  /** When this incarnation started: rows left mid-way before it belong to a process that is gone. */
  private readonly startedAt = Date.now();
  private readonly flavorMemo = new FlavorMemo();
  private readonly minIdle: MinIdleKeeper;
  /** Running jobs the last drift check found without a busy runner at GitHub (stale-jobs.ts). */
  private suspects: QueuedJob[] = [];

  constructor(private readonly host: PassHost) {
    this.minIdle = new MinIdleKeeper(host.executor.state);
  }

  /** Returns whether it changed anything. */
  async run(trigger: string, cost: InvocationCost): Promise<boolean> {
    const { executor, listener, poller, runRecord } = this.host;
    const { env, state, settings } = executor;
    const scaleSetId = state.scaleSetId;
    if (!scaleSetId) return false;
    const started = Date.now();
    const trips = { n: 0, statements: 0 };
    const db = countingD1(env.DB, trips);
    state.setTimer("nudge", null);
    state.setTimer("retry", null);

    const rows = await loadScaleSetSnapshot(db, scaleSetId);
    const ss = rows.scaleSet;
    if (!ss) {
      if (listener.dueAt(null) !== null) {
        // Its runner scale set session must be closed at GitHub first (the listener step does it).
        state.setTimer("listen", Date.now() + settings.listenRearmMs);
        return false;
      }
      // The scale set is gone (its API delete checks no instances are live): forget everything.
      log({ event: "scaleset_object_cleared", scale_set: scaleSetId });
      state.clear();
      await this.host.storage.deleteAlarm();
      return false;
    }

    // A scale set API listener with a step due and nothing armed for it (new, enabled again): at once.
    listener.armFirstStep(ss);
    poller.arm(ss);

    const limit = hardLimitAgainst(state.createBackoff, state.hardLimitVersion, ss.updatedAt);
    if (limit && "lifted" in limit) {
      [state.createBackoff, state.hardLimitVersion] = [NO_CREATE_BACKOFF, null];
      log({ event: "hard_limit_lifted", scale_set: ss.id, reason: "scale set updated" });
    } else if (limit) state.hardLimitVersion = limit.setVersion;
    const backoff = state.createBackoff;

    state.pruneOps(new Set(rows.instances.map((i) => i.name)));
    const now = Date.now();
    const spend = keepSpendGuard(state, ss, rows.machineMsToday, now);
    // Min idle on a schedule; its next change is armed as a timer (schedule/min-idle-keeping.ts).
    const minIdle = this.minIdle.evaluate(ss, this.host.clock());
    // A shaped scale set's jobs each want a machine of their own shape (scaleset/shaped-queue.ts).
    const shaped = ss.shape
      ? await judgeShapedQueue({
          db,
          ss,
          queue: rows.shapedQueue,
          memo: this.flavorMemo,
          machines: async () => (await openScaleSetPorts(env, ss, { outbound: executor.outbound })).machines,
          now,
        })
      : null;
    const planInput = planSnapshot({
      scaleSet: ss,
      minIdleRunners: minIdle.minIdle,
      instances: rows.instances,
      // scaleset_api: assigned jobs not yet started, as D1 and GitHub's statistics both count them.
      queuedJobs: shaped ? shaped.queuedShapes.length : ss.intake === "scaleset_api" ? listener.demand(rows) : rows.queuedJobs,
      ...(shaped && { queuedShapes: shaped.queuedShapes }),
      ops: state.allOps(),
      inFlight: executor.inFlight,
      createBackoff: backoff,
      settings,
      startedAt: this.startedAt,
      spendCapReached: spend.holding,
      now,
    });
    const planned = plan(planInput);
    // GitHub's budget paces JIT mints at GitHub; a Forgejo runner's registration is not paid from it.
    const budget = ss.endpoint.forge === "forgejo" ? null : settings.githubBudget;
    const paid = await payForCreates({ ...rows, db, scaleSet: ss, plan: planned, state, now }, budget);
    // What this invocation cannot pay for in subrequests is left to the next (invocation-cap.ts).
    const result = awaitingFlavors(fitToInvocation(paid, ss.id, now), shaped?.awaitingCatalogue ?? 0, this.flavorMemo.retryAt());
    const planLine = { event: "plan", scale_set: ss.id, trigger, ...result.summary, actions: result.actions.length };
    logAt(passLevel({ actions: result.actions.length, blocked: result.summary.blocked }), planLine);

    let error: string | null = null;
    let staleCorrected = false;
    try {
      // Drift is judged against this snapshot, before the plan adds anything the cloud cannot know yet.
      this.suspects = (await checkDriftWhenDue(executor, db, ss, rows.instances, now)) ?? this.suspects;
      if (result.actions.length) await executePlan(executor, db, ss, rows.instances, result.actions, result.mintWith, shaped?.machines);
      // Lost webhooks: jobs GitHub has long started or finished must stop asking for runners, and
      // jobs it finished must give back their machines.
      // (The scale set API loses nothing: its queue holds every event until acknowledged.)
      const corrected =
        ss.intake === "scaleset_api" || ss.intake === "poll"
          ? 0
          : await recheckStaleJobs({
              db,
              scaleSetId: ss.id,
              oldest: rows.oldestQueued,
              // Still running as this pass saw them (a `completed` that came meanwhile settled the rest).
              suspects: this.suspects.filter((j) => rows.instances.some((i) => i.jobId === j.id && i.jobStatus === "in_progress")),
              github: githubRunnerPort(env, ss.entity, executor.outbound),
              checks: state,
              policy: settings.staleJobs,
              concurrency: settings.concurrency,
            });
      if (corrected > 0) staleCorrected = true;
    } catch (err) {
      error = errorText(err);
      log({ event: "reconcile_error", scale_set: ss.id, error });
    }

    runRecord.addPass({
      started,
      at: now,
      actions: result.actions,
      trips: trips.n,
      statements: trips.statements,
      subrequests: cost.subrequests,
      fetches: cost.fetches,
      error,
      summary: result.summary,
      minIdle: planInput.config.minIdleRunners,
    });
    const acted = result.actions.length > 0 || staleCorrected;
    const quiet = { lastDeletedAt: rows.lastDeletedAt, now: Date.now() };
    state.setTimer("tick", Date.now() + tickDelay(error === null ? result.summary : null, acted, settings, quiet));
    state.setTimer("wake", result.wakeAt);
    return acted;
  }
}
