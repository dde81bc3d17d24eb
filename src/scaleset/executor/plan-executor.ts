import { keyringFor } from "../../crypto/keyring";
import { seal } from "../../crypto/secret-box";
import { secretContext } from "../../crypto/secret-contexts";
import {
  applyStatusChanges,
  CALLING_PROVIDER,
  insertInstancesStatements,
  type NewInstance,
  type StatusChange,
} from "../../db/runner/instance-store";
import type { InstanceRecord, ScaleSetRecord } from "../../db/scaleset/snapshot-store";
import type { Env } from "../../env";
import { bindNewRunners } from "../../forges/forgejo/poller-host";
import { mapLimit } from "../../lib/map-limit";
import { errorText, logEvent as log, logAt } from "../../observability/log";
import type { MachineShape } from "../../shapes/machine-shape";
import { runnerLabels } from "../../shapes/runner-labels";
import { transitionLevel } from "../log-levels";
import { deleteOutcome, nextDeleteRetry, pollOutcome } from "../machine-outcomes";
import type { ObjectState } from "../object/object-state";
import { afterCreate, keepCreateBackoff, keepOutcome } from "../outcome-keeping";
import { githubRunnerPort, instanceRunnerPort, openScaleSetPorts } from "../ports-factory";
import type { Action } from "../reconcile";
import { buildBootstrapInstance, mintsJitOnBoot, tokenMinutes } from "../runner/bootstrap";
import { mintInstanceToken } from "../runner/instance-token";
import { removeInstanceRunner } from "../runner/runner-identity";
import { runnerName } from "../runner/runner-names";
import type { ScaleSetSettings } from "../settings";
import { type PendingCreate, settleCreates } from "./create-dispatch";
import { type ReapedInstance, recordReaps } from "./reap-record";

/** How long after a shim's timeout a cut-off create may still show its machine (the cloud finishing what the shim started). */
const CREATE_LANDING_MARGIN_MS = 5_000;

// Carries out a plan with a fixed number of D1 batches whatever its size, the outbound calls
// (GitHub, the shim) running in parallel between them:
//   1. marks, and new rows as pending_create (so overlapping passes cannot double-create), and
//      to creating in the same batch when the pass mints no JIT config for them;
//   2. new rows to creating (with the sealed JIT config minted for them) or error, deletes to
//      deleting, poll results;
//   3. what the provider said of the deletes; creates are written as their answers come
//      (create-dispatch.ts: one call each, or in batches when the shim offers protocol v1.1's).
/** What the executor needs of the scale set object it works for. */
export interface ExecutorContext {
  env: Env;
  state: ObjectState;
  settings: ScaleSetSettings;
  /** Instances with an operation of this incarnation under way: nobody else may touch them. */
  inFlight: Set<string>;
  /** Plans again: a create answer that came after its pass may need a replacement or a backoff. */
  replan(): void;
  /** The fetch the object's outbound calls go through (its connection limiter), if it has one. */
  outbound?: typeof fetch;
}

/** The job a Forgejo runner was made for, on its instance row. */
const forgejoJobSet = (job: { id: number; seq: number; handle: string } | undefined) =>
  job ? { forgeJobHandle: job.handle, jobId: job.id, jobSeq: job.seq } : {};

const deleteAttempts = (state: ObjectState, instance: string) => state.ops(instance)?.deleteAttempts ?? 0;

/** The token a new machine calls back with (its first create attempt). */
const tokenFor = (env: Env, ss: ScaleSetRecord, instance: NewInstance, at: number) =>
  mintInstanceToken(
    env.INSTANCE_TOKEN_SECRET,
    { instance: instance.name, scaleSetId: ss.id, createAttempt: 1, bootstrapTimeoutMinutes: tokenMinutes(ss) },
    at,
  );

/** Carries out one pass's plan; returns once its creates are recorded or left to settle in the background. */
export async function executePlan(
  ctx: ExecutorContext,
  db: D1Database,
  ss: ScaleSetRecord,
  rows: InstanceRecord[],
  actions: Action[],
  /** The credential that paid for each create's JIT config, in order (absent: the entity's own). */
  mintWith?: readonly string[],
  /** A shaped scale set: the machine of each servable job (creates name theirs by `forQueued`). */
  shapedMachines?: readonly MachineShape[],
): Promise<void> {
  const { env, state, settings, inFlight } = ctx;
  const keyring = await keyringFor(env);
  const { machines, runners } = await openScaleSetPorts(env, ss, { outbound: ctx.outbound, githubScaleSetId: state.listenerScaleSetId });
  const byName = new Map(rows.map((row) => [row.name, row]));
  const now = Date.now();
  const concurrency = settings.concurrency;
  const background = new Set<string>();

  const marks: StatusChange[] = [];
  const reaps: ReapedInstance[] = [];
  for (const action of actions) {
    if (action.type !== "mark_delete") continue;
    const row = byName.get(action.instance)!;
    // A hard-capped runner on its job is force-deleted: GitHub refuses to remove a busy runner, and it must go all the same.
    const to = action.reap?.force ? "pending_force_delete" : "pending_delete";
    const reason = action.reap ? `${action.reason}: ${action.reap.reason}` : action.reason;
    marks.push({ id: row.id, from: row.status, to, reason, at: now });
    if (action.reap) reaps.push({ id: row.id, instance: action.instance, reap: action.reap });
  }
  const createCount = actions.reduce((count, action) => count + (action.type === "create" ? action.count : 0), 0);
  const shapes = actions.flatMap((action) => (action.type === "create" ? (action.forQueued ?? []) : [])).map((i) => shapedMachines?.[i]);
  const fresh: NewInstance[] = Array.from({ length: createCount }, (_, index) => ({
    id: crypto.randomUUID(),
    name: runnerName(ss.runnerPrefix),
    scaleSetId: ss.id,
    osType: ss.osType,
    osArch: ss.osArch,
    createdAt: now,
    jitOnBoot: mintsJitOnBoot(ss),
    ...(shapes[index] && { shape: shapes[index], osArch: shapes[index].arch }),
  }));
  const deletes = actions
    .filter((action): action is Extract<Action, { type: "delete" }> => action.type === "delete")
    .map((action) => ({ ...action, row: byName.get(action.instance)! }));
  const polls = actions
    .filter((action): action is Extract<Action, { type: "poll" }> => action.type === "poll")
    .map((action) => ({ ...action, row: byName.get(action.instance)! }));
  const touched = [...fresh.map((instance) => instance.name), ...deletes.map((del) => del.instance), ...polls.map((poll) => poll.instance)];
  for (const name of touched) inFlight.add(name);
  const nameOf = (id: string) => rows.find((row) => row.id === id)?.name ?? fresh.find((instance) => instance.id === id)?.name;
  const logTransitions = (changes: StatusChange[]) => {
    for (const change of changes) {
      logAt(transitionLevel(change.from, change.to), {
        event: "instance_transition",
        scale_set: ss.id,
        instance: nameOf(change.id),
        from: change.from,
        to: change.to,
        reason: change.reason,
      });
    }
  };

  // Without a JIT config to mint in the pass (minted on boot, or a registration token), nothing
  // outbound comes between a new row and its create: the row goes to `creating` in batch 1, one
  // D1 round trip fewer on the way from a queued job to its machine.
  const jitInPass = ss.jitConfigEnabled && !mintsJitOnBoot(ss);
  const toCreate: PendingCreate[] = [];
  const early: StatusChange[] = [];

  try {
    if (!jitInPass) {
      for (const instance of fresh) {
        early.push({ id: instance.id, from: "pending_create", to: "creating", reason: CALLING_PROVIDER, at: now });
        toCreate.push({ instance, token: await tokenFor(env, ss, instance, now) });
      }
    }
    // Batch 1: marks and new rows (inserted as `creating` already when the pass mints no JIT config).
    let applied1 = new Set<string>();
    if (marks.length || fresh.length) {
      const rows = jitInPass ? fresh : fresh.map((f) => ({ ...f, creating: true }));
      applied1 = await applyStatusChanges(db, marks, insertInstancesStatements(db, rows, "created to meet demand"));
      // The batch is one transaction: its new rows are there.
      for (const f of fresh) applied1.add(f.id);
      logTransitions([...marks, ...early]);
      recordReaps(ss.id, reaps, applied1);
    }

    // Outbound, phase 1: JIT configs for new runners, GitHub removal before deleting, polls.
    const tools = fresh.length ? await runners.runnerDownloads().catch(() => []) : [];
    // Without JIT (a registration token), or with JIT minted on boot, the metadata route serves the machine.
    const minting = jitInPass ? fresh : [];
    // Forgejo: each new runner is made for one waiting job the poller holds (its handle).
    const forgejoJobs = ss.endpoint.forge === "forgejo" ? bindNewRunners(state, { instances: rows }, fresh) : null;
    const jitConfigs = await mapLimit(minting, concurrency, async (instance) => {
      if (forgejoJobs && !forgejoJobs.has(instance.id)) return { ok: false as const, error: "no waiting Forgejo job is left for it" };
      const credentialId = mintWith?.[fresh.indexOf(instance)];
      // Minted by the credential whose budget paid for it.
      const port =
        credentialId && credentialId !== ss.entity.credentialsId
          ? githubRunnerPort(env, { ...ss.entity, credentialsId: credentialId }, ctx.outbound)
          : runners;
      try {
        const labels = runnerLabels(ss.labels, instance.shape);
        const config = await port.createJitRunner({ name: instance.name, labels, runnerGroup: ss.runnerGroup });
        return { ok: true as const, ...config, credentialId };
      } catch (err) {
        return { ok: false as const, error: errorText(err) };
      }
    });
    const removals = await mapLimit(deletes, concurrency, async (del) => {
      try {
        const removal = await removeInstanceRunner(instanceRunnerPort(env, ss, runners, del.row.jitCredentialsId, ctx.outbound), del.row);
        if (removal.rejectedClaim) {
          log({
            event: "runner_id_claim_rejected",
            scale_set: ss.id,
            instance: del.instance,
            runner_id: removal.rejectedClaim.runnerId,
            runner_name: removal.rejectedClaim.runnerName,
            reason: "GitHub has that id under another runner's name",
          });
        }
        return removal;
      } catch (err) {
        // Without GitHub we cannot know the runner is idle; a forced delete goes on regardless.
        return del.force ? ({ removal: "gone", confirmedId: null, rejectedClaim: null } as const) : "error:" + errorText(err);
      }
    });
    const polled = await mapLimit(polls, concurrency, (poll) => machines.getInstance(poll.row.providerId ?? poll.instance));

    // Batch 2: new rows to creating or error, deletes to deleting, poll results.
    const t2 = Date.now();
    const batch2: StatusChange[] = [];
    for (const [index, instance] of minting.entries()) {
      const jit = jitConfigs[index]!;
      if (!jit.ok) {
        batch2.push({
          id: instance.id,
          from: "pending_create",
          to: "error",
          reason: forgejoJobs ? "Forgejo runner registration failed" : "GitHub JIT config failed",
          at: t2,
          set: { providerFault: `github: ${jit.error}`.slice(0, 2000) },
        });
        continue;
      }
      const sealed = await seal(keyring, jit.encodedJitConfig, secretContext.jitConfig(instance.id));
      batch2.push({
        id: instance.id,
        from: "pending_create",
        to: "creating",
        reason: CALLING_PROVIDER,
        at: t2,
        set: {
          agentId: jit.runnerId,
          jitConfigEnc: sealed,
          jitCredentialsId: jit.credentialId ?? ss.entity.credentialsId,
          ...forgejoJobSet(forgejoJobs?.get(instance.id)),
        },
      });
      toCreate.push({ instance, token: await tokenFor(env, ss, instance, t2) });
    }
    const toDelete: typeof deletes = [];
    for (const [index, del] of deletes.entries()) {
      const removal = removals[index]!;
      if (typeof removal === "string") {
        keepOutcome(state, ss.id, del.instance, { change: null, ...nextDeleteRetry(deleteAttempts(state, del.instance), Date.now()) });
        log({ event: "delete_deferred", scale_set: ss.id, instance: del.instance, error: removal.slice(6) });
        continue;
      }
      // The runner id GitHub just vouched for is recorded as the instance's own.
      const set = removal.confirmedId === null ? undefined : { agentId: removal.confirmedId };
      // A forced delete goes on without it: the machine goes, and its runner, offline, is left to the drift
      // check (runners no live instance has) and to GitHub, which drops an ephemeral runner offline for a day.
      if (removal.removal === "busy" && !del.force) {
        batch2.push({
          id: del.row.id,
          from: del.row.status,
          to: "running",
          reason: "runner took a job before it could be removed; kept",
          at: t2,
          set,
        });
      } else {
        batch2.push({
          id: del.row.id,
          from: del.row.status,
          to: "deleting",
          reason: del.force ? "force deleting" : "deleting",
          at: t2,
          set,
        });
        toDelete.push(del);
      }
    }
    const askAgainMs = Math.min(settings.operationPollMs, 60_000);
    let backoff = state.createBackoff;
    for (const [index, poll] of polls.entries()) {
      // A create cut off by a kill may still land until its request would have timed out (and a little after).
      const mayLandUntil = poll.row.statusChangedAt + ss.provider.timeoutSeconds * 1000 + CREATE_LANDING_MARGIN_MS;
      const outcome = pollOutcome(poll.row, state.ops(poll.instance)?.opKind ?? null, polled[index]!, t2, askAgainMs, mayLandUntil);
      backoff = afterCreate(backoff, outcome.create, t2, settings.createBackoff);
      const change = keepOutcome(state, ss.id, poll.instance, outcome);
      if (change) batch2.push(change);
    }
    keepCreateBackoff(state, ss.id, ss.updatedAt, backoff, settings.createBackoff, t2);
    const applied2 = await applyStatusChanges(db, batch2);

    // Outbound, phase 2: the provider creates and deletes.
    const creating = toCreate.filter((create) => applied1.has(create.instance.id) || applied2.has(create.instance.id));
    const deleting = toDelete.filter((del) => applied2.has(del.row.id));
    // Creates settle in the background: a slow or hung shim call (up to its timeout) must not hold
    // up this scale set's deletes and later passes. The pass waits for them only briefly.
    const creates = settleCreates(ctx, db, ss, creating, machines, (create) =>
      buildBootstrapInstance({
        scaleSet: ss,
        name: create.instance.name,
        token: create.token,
        publicUrl: env.PUBLIC_URL,
        tools,
        shape: create.instance.shape,
      }),
    );
    for (const create of creating) background.add(create.instance.name);
    const deleted = await mapLimit(deleting, concurrency, (del) => machines.deleteInstance(del.row.providerId ?? del.instance));

    // Batch 3 (deletes; creates: settleCreates).
    const t3 = Date.now();
    const batch3: StatusChange[] = [];
    for (const [index, del] of deleting.entries()) {
      const outcome = deleteOutcome(del.row, del.force, deleted[index]!, deleteAttempts(state, del.instance), t3, settings.operationPollMs);
      const change = keepOutcome(state, ss.id, del.instance, outcome);
      if (change) batch3.push(change);
    }
    await applyStatusChanges(db, batch3);
    logTransitions([...batch2, ...batch3]);
    await creates;
  } finally {
    // Names whose create is still under way stay in flight until settleCreates is done with them.
    for (const name of touched) if (!background.has(name)) inFlight.delete(name);
  }
}
