import { applyStatusChanges, type NewInstance, type StatusChange } from "../../db/runner/instance-store";
import type { ScaleSetRecord } from "../../db/scaleset/snapshot-store";
import { mapLimit } from "../../lib/map-limit";
import { errorText, logEvent as log, logAt } from "../../observability/log";
import type { BootstrapInstance } from "../../providers/shim-protocol";
import { transitionLevel } from "../log-levels";
import { createOutcome, faultOf } from "../machine-outcomes";
import { afterCreate, keepCreateBackoff, keepOutcome } from "../outcome-keeping";
import type { MachineCreated, MachinePort, PortResult } from "../ports";
import type { ExecutorContext } from "./plan-executor";

// Phase 2 of a pass, its creates: sent one by one (protocol v1) or in batches of at most the
// shim's largest (v1.1 `POST /v1/instances:batch`), and recorded as their answers come. A batch
// costs one of the object's six connections for up to a hundred machines, where single creates
// hold one each; every item of a batch is then settled exactly like a single create's answer.

/** How long a pass waits for its shim creates before leaving them to finish on their own. */
const CREATE_WAIT_MS = 2_000;

/** A new instance on its way to the provider, with the token its machine will call back with. */
export interface PendingCreate {
  instance: NewInstance;
  token: string;
}

/** The shim's answer to one create. */
interface CreateAnswer {
  create: PendingCreate;
  answer: PortResult<MachineCreated>;
  /** Set when the answer is the failure of a whole batch request, shared by its instances. */
  batch?: object;
}

/** `items` in ⌈length / max⌉ groups whose sizes differ by one at most (150 by 100: 75 and 75, not 100 and 50). */
export function evenBatches<T>(items: T[], max: number): T[][] {
  const count = Math.ceil(items.length / Math.max(1, max));
  const base = Math.floor(items.length / Math.max(1, count));
  const bigger = items.length - base * count;
  const groups: T[][] = [];
  for (let i = 0, start = 0; i < count; i++) {
    const size = base + (i < bigger ? 1 : 0);
    groups.push(items.slice(start, start + size));
    start += size;
  }
  return groups;
}

/**
 * Sends every create to the provider: in batches when its shim offers batch create and there
 * is more than one, else one call each; `deliver` gets each instance's answer as it comes
 * (a batch's all at once).
 */
async function sendCreates(
  ctx: ExecutorContext,
  machines: MachinePort,
  creating: PendingCreate[],
  bootstrapOf: (pending: PendingCreate) => BootstrapInstance,
  deliver: (pending: PendingCreate, answer: () => Promise<Omit<CreateAnswer, "create">>) => Promise<void>,
): Promise<void> {
  const concurrency = ctx.settings.concurrency;
  const max = creating.length > 1 ? await machines.batchCreateMax().catch(() => 0) : 0;
  if (max < 2) {
    await mapLimit(creating, concurrency, (pending) =>
      deliver(pending, async () => ({ answer: await machines.createInstance(bootstrapOf(pending)) })),
    );
    return;
  }
  await mapLimit(evenBatches(creating, max), concurrency, async (group) => {
    // Deferred, so that a throw on the way (building a bootstrap) reaches each instance's own catch.
    const answers = Promise.resolve().then(() => machines.createInstances(group.map(bootstrapOf)));
    const batch = {};
    await Promise.all(
      group.map((pending, index) =>
        deliver(pending, async () => {
          const all = await answers;
          return all.ok ? { answer: all.value[index]! } : { answer: all, batch };
        }),
      ),
    );
  });
}

/**
 * Runs the provider creates and records what the shim said. Answers that come within the
 * pass's wait (CREATE_WAIT_MS) are written together (one D1 batch however many); later ones are
 * written as they come, so one hung create does not hide the others' machines until it times
 * out. A late outcome (a failure to replace, a backoff) needs a new plan: each late write is
 * followed by a reconcile.
 */
export function settleCreates(
  ctx: ExecutorContext,
  db: D1Database,
  ss: ScaleSetRecord,
  creating: PendingCreate[],
  machines: MachinePort,
  bootstrapOf: (pending: PendingCreate) => BootstrapInstance,
): Promise<void> {
  if (!creating.length) return Promise.resolve();
  const ready: CreateAnswer[] = [];
  // Batch requests whose failure the create backoff has counted (once each, see recordCreates).
  const counted = new WeakSet<object>();
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
        await recordCreates(ctx, db, ss, group, counted);
      } catch (err) {
        // The rows stay `creating`; the stuck check asks the shim about them later.
        log({ event: "create_settle_failed", scale_set: ss.id, error: errorText(err) });
      } finally {
        for (const answered of group) ctx.inFlight.delete(answered.create.instance.name);
      }
      if (late) ctx.replan();
    });
    return writing;
  };
  const window = new Promise<void>((resolve) => setTimeout(resolve, CREATE_WAIT_MS));
  const all = sendCreates(ctx, machines, creating, bootstrapOf, async (pending, answer) => {
    try {
      ready.push({ create: pending, ...(await answer()) });
    } catch (err) {
      // The row stays `creating`; the stuck check asks the shim about it later.
      ctx.inFlight.delete(pending.instance.name);
      log({ event: "create_settle_failed", scale_set: ss.id, instance: pending.instance.name, error: errorText(err) });
      return;
    }
    if (late) void flush();
  }).catch((err) => {
    // Only the capabilities lookup can get here (it is caught too); the rows stay `creating` for the stuck check.
    log({ event: "create_settle_failed", scale_set: ss.id, error: errorText(err) });
  });
  const windowed = window.then(() => {
    late = true;
    return flush();
  });
  // The pass waits for what came within the window to be recorded, never for the stragglers.
  return Promise.race([all.then(() => flush()), windowed]);
}

/**
 * Writes a group of create answers in one batch, and moves the create backoff with them. A
 * batch request that failed whole (a timeout, a 5xx) is one failed call, not one per machine
 * in it: it counts once (`counted`), so one lost answer cannot hit the hard limit by itself.
 */
async function recordCreates(
  ctx: ExecutorContext,
  db: D1Database,
  ss: ScaleSetRecord,
  answers: CreateAnswer[],
  counted: WeakSet<object>,
): Promise<void> {
  const { state, settings } = ctx;
  const t3 = Date.now();
  const batch3: StatusChange[] = [];
  let backoff = state.createBackoff;
  for (const { create, answer, batch } of answers) {
    const outcome = createOutcome(create.instance.id, answer, t3, settings.operationPollMs);
    if (!batch || !counted.has(batch)) backoff = afterCreate(backoff, outcome.create, t3, settings.createBackoff);
    if (batch) counted.add(batch);
    if (outcome.create === "failed") {
      const error = answer.ok ? "provider reported the machine in status error" : faultOf(answer.error);
      log({ event: "create_failed", scale_set: ss.id, instance: create.instance.name, error, failures: backoff.failures });
    }
    const change = keepOutcome(state, ss.id, create.instance.name, outcome);
    if (change) batch3.push(change);
  }
  keepCreateBackoff(state, ss.id, ss.updatedAt, backoff, settings.createBackoff, t3);
  await applyStatusChanges(db, batch3);
  for (const change of batch3) {
    logAt(transitionLevel(change.from, change.to), {
      event: "instance_transition",
      scale_set: ss.id,
      instance: answers.find((answered) => answered.create.instance.id === change.id)?.create.instance.name,
      from: change.from,
      to: change.to,
      reason: change.reason,
    });
  }
}
