/**
 * Carries out one listener step (listener.ts decides which) against the runner scale set API
 * and D1, and reports its outcome as plain data. A polled message is acted on in this order:
 * acquire what is available, merge its job events into D1 (the intake's upsert, so they land
 * exactly like webhook-fed ones), then acknowledge it. Anything failing before the ack leaves
 * the message to come back, and every effect is idempotent, so nothing is lost or done twice.
 */
import { recordWorkflowJob } from "../../db/jobs/delivery-store";
import type { ScaleSetRecord } from "../../db/scaleset/snapshot-store";
import { logEvent as log, logger } from "../../observability/log";
import { count, counterName, observeJobDurations } from "../../observability/op-counters";
import type { ActionsServicePort, QueueMessage, UnreadableMessage } from "./actions-port";
import {
  type ListenerState,
  type ListenerStep,
  messagePlan,
  runnerGroupChoice,
  type StepOutcome,
  UNREADABLE_MESSAGE_TRIES,
  unreadableTry,
} from "./listener";

export interface ListenerDriverContext {
  db: D1Database;
  port: ActionsServicePort;
  /** The scale set; null once it is deleted (then closing also unregisters it at GitHub). */
  scaleSet: ScaleSetRecord | null;
  scaleSetId: string;
  state: ListenerState;
  /** The session's owner name, as GitHub shows it. */
  owner: string;
  now: () => number;
}

/** The labels a runner scale set is registered with: its name (what `runs-on` names) and the scale set's labels. */
export const registeredLabels = (ss: Pick<ScaleSetRecord, "name" | "labels">) => [...new Set([ss.name, ...ss.labels])];

export async function runListenerStep(
  ctx: ListenerDriverContext,
  step: Exclude<ListenerStep, { kind: "wait" | "idle" }>,
): Promise<StepOutcome> {
  const { port, state: s } = ctx;
  switch (step.kind) {
    case "register": {
      const ss = ctx.scaleSet!;
      const choice = runnerGroupChoice(ss.entity.kind, ss.runnerGroup);
      if ("refused" in choice) return { step: "register", ok: false, error: { kind: "permanent", message: choice.refused } };
      const group = "id" in choice ? { ok: true as const, value: choice.id } : await port.runnerGroupId(choice.lookup);
      if (!group.ok) return { step: "register", ok: false, error: group.error };
      const found = await port.findScaleSet(group.value, ss.name);
      if (!found.ok) return { step: "register", ok: false, error: found.error };
      if (found.value) {
        log({ event: "runner_scale_set_adopted", scale_set: ctx.scaleSetId, github_scale_set_id: found.value.id, name: ss.name });
        return { step: "register", ok: true, githubScaleSetId: found.value.id };
      }
      const created = await port.createScaleSet({ name: ss.name, runnerGroupId: group.value, labels: registeredLabels(ss) });
      if (!created.ok) return { step: "register", ok: false, error: created.error };
      log({ event: "runner_scale_set_registered", scale_set: ctx.scaleSetId, github_scale_set_id: created.value.id, name: ss.name });
      return { step: "register", ok: true, githubScaleSetId: created.value.id };
    }
    case "open_session": {
      const r = await port.createSession(s.githubScaleSetId!, ctx.owner);
      if (!r.ok) return { step: "open_session", ok: false, error: r.error };
      log({ event: "listener_session_opened", scale_set: ctx.scaleSetId, github_scale_set_id: s.githubScaleSetId });
      return { step: "open_session", ok: true, session: r.value };
    }
    case "refresh_session": {
      const r = await port.refreshSession(s.githubScaleSetId!, s.session!.sessionId);
      return r.ok ? { step: "refresh_session", ok: true, session: r.value } : { step: "refresh_session", ok: false, error: r.error };
    }
    case "close_session": {
      const gh = s.githubScaleSetId;
      if (gh !== null && s.session) {
        const r = await port.deleteSession(gh, s.session.sessionId);
        if (!r.ok) return { step: "close_session", ok: false, error: r.error };
        log({ event: "listener_session_closed", scale_set: ctx.scaleSetId, github_scale_set_id: gh });
      }
      if (!ctx.scaleSet && gh !== null) {
        // The scale set is deleted here: jobs must not wait at GitHub for runners that never come.
        const gone = await port.deleteScaleSet(gh);
        if (!gone.ok) return { step: "close_session", ok: false, error: gone.error };
        log({ event: "runner_scale_set_deleted", scale_set: ctx.scaleSetId, github_scale_set_id: gh });
        return { step: "close_session", ok: true, unregistered: true };
      }
      return { step: "close_session", ok: true, unregistered: false };
    }
    case "poll":
      return poll(ctx);
  }
}

async function poll(ctx: ListenerDriverContext): Promise<StepOutcome> {
  const { port, state: s } = ctx;
  const ss = ctx.scaleSet!;
  const session = s.session!;
  const got = await port.getMessage(session, s.lastMessageId, ss.maxRunners);
  if (!got.ok) return { step: "poll", ok: false, error: got.error };
  const msg = got.value;
  if (!msg) return { step: "poll", ok: true, handled: null };
  if ("unreadable" in msg) return unreadable(ctx, msg);

  const plan = messagePlan(msg, { entityId: ss.entity.id, scaleSetId: ss.id, githubScaleSetId: s.githubScaleSetId! });
  if (plan.acquire.length) {
    const acquired = await port.acquireJobs(s.githubScaleSetId!, session, plan.acquire);
    if (!acquired.ok) return { step: "poll", ok: false, error: acquired.error };
    log({ event: "listener_jobs_acquired", scale_set: ss.id, requested: plan.acquire.length, acquired: acquired.value.length });
  }
  const at = ctx.now();
  for (const j of plan.jobs) {
    const recorded = await recordWorkflowJob(ctx.db, {
      deliveryId: j.key,
      event: "scaleset_message",
      action: j.action,
      job: j.job,
      reach: [ss.id],
      receivedAt: at,
    });
    if (recorded.kind === "recorded") observeJobDurations(recorded.observed);
  }
  const acked = await port.deleteMessage(session, msg.messageId);
  if (!acked.ok) return { step: "poll", ok: false, error: acked.error };
  traceInvalid(ss.id, msg);
  log({
    event: "listener_message",
    scale_set: ss.id,
    message_id: msg.messageId,
    jobs: msg.jobs.length,
    invalid: msg.invalid.length,
    skipped: msg.skipped.length,
    assigned: msg.statistics?.totalAssignedJobs ?? null,
    running: msg.statistics?.totalRunningJobs ?? null,
  });
  return { step: "poll", ok: true, handled: { messageId: msg.messageId, statistics: msg.statistics, invalidItems: msg.invalid.length } };
}

/** Invalid items logged one by one per message; a message of thousands says how many more in one line. */
const MAX_INVALID_LINES = 20;

/** Logs (once, with the ack) each item that failed validation and each type skipped, and counts the invalid ones for /metrics. */
function traceInvalid(scaleSetId: string, msg: QueueMessage) {
  for (const item of msg.invalid.slice(0, MAX_INVALID_LINES))
    logger.warn({
      event: "listener_job_invalid",
      scale_set: scaleSetId,
      message_id: msg.messageId,
      runner_request_id: item.runnerRequestId,
      message_type: item.type,
      recorded: item.runnerRequestId !== null,
      problems: item.problems.slice(0, 10),
    });
  if (msg.invalid.length > MAX_INVALID_LINES)
    logger.warn({
      event: "listener_job_invalid",
      scale_set: scaleSetId,
      message_id: msg.messageId,
      more: msg.invalid.length - MAX_INVALID_LINES,
    });
  if (msg.invalid.length) count(counterName("listener.invalid", scaleSetId, "job_item"), msg.invalid.length);
  // Types GitHub may add: skipped as ARC's listener skips them, but said.
  if (msg.skipped.length)
    log({ event: "listener_job_skipped", scale_set: scaleSetId, message_id: msg.messageId, types: [...new Set(msg.skipped)].slice(0, 10) });
}

/**
 * A message that cannot be read: left for another poll (a glitch may pass), then acknowledged
 * unread at the UNREADABLE_MESSAGE_TRIES-th, so the queue moves on. The state counts the tries.
 */
async function unreadable(ctx: ListenerDriverContext, msg: UnreadableMessage): Promise<StepOutcome> {
  const ss = ctx.scaleSet!;
  const tries = unreadableTry(ctx.state, msg.messageId);
  const line = { event: "listener_message_unreadable", scale_set: ss.id, message_id: msg.messageId, try: tries, error: msg.unreadable };
  if (tries < UNREADABLE_MESSAGE_TRIES) {
    logger.warn({ ...line, acknowledged: false });
    const message = `message ${msg.messageId} is unreadable (try ${tries} of ${UNREADABLE_MESSAGE_TRIES}): ${msg.unreadable}`;
    return { step: "poll", ok: false, error: { kind: "permanent", message }, unreadable: { messageId: msg.messageId } };
  }
  const acked = await ctx.port.deleteMessage(ctx.state.session!, msg.messageId);
  if (!acked.ok) return { step: "poll", ok: false, error: acked.error };
  logger.warn({ ...line, acknowledged: true });
  count(counterName("listener.invalid", ss.id, "message"));
  return { step: "poll", ok: true, handled: { messageId: msg.messageId, statistics: null, unreadable: msg.unreadable } };
}
