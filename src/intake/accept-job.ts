import { type IntakeResult, recordWorkflowJob } from "../db/jobs/delivery-store";
import type { Env } from "../env";
import { logEvent as log, logger } from "../observability/log";
import { drainCounterStatements, MAX_COUNTERS_PER_FLUSH, observeJobDurations, WEBHOOK_REJECTED } from "../observability/op-counters";
import type { Directory } from "./directory";
import { jobEventFrom } from "./job-event";
import { nudgeTargets } from "./nudge-targets";
import type { IntakeOutcome } from "./outcome";
import { onlyOutOfBounds, WorkflowJobPayload } from "./payload";
import { inScope, routeJob } from "./routing";
import { reporterOf, type SenderEntity } from "./senders";

/**
 * The last step of intake, shared by every way a workflow_job event comes in: parse the
 * payload, route the job among the scale sets its signers may reach, and store it in one D1
 * batch. Who the signers are was settled before: by the webhook's signature
 * (receive-delivery.ts), or by the hook that GitHub itself said the delivery went through
 * (recovered-delivery.ts).
 */

const DAY_MS = 86_400_000;

export interface JobEventInput {
  /** The delivery's GUID (X-GitHub-Delivery), or the backstop's id for what it found (recovery/backstop.ts). */
  deliveryId: string;
  /**
   * `backstop`: not a delivery, a job the backstop found at GitHub (same merge, counted apart
   * from webhook deliveries). Default `workflow_job`.
   */
  event?: "workflow_job" | "backstop";
  json: unknown;
  receivedAt: number;
  /** RETENTION_DAYS: a job created longer ago than this may advance its row but never create one. */
  retentionDays: number;
  directory: Directory;
  /** The entities that vouch for the event, most specific first (never empty). */
  signers: SenderEntity[];
  /** More fields for the accepted log line (a recovered delivery says how it came). */
  logFields?: Record<string, unknown>;
}

export async function acceptWorkflowJob(env: Pick<Env, "DB">, input: JobEventInput): Promise<IntakeOutcome> {
  const { deliveryId: id, directory, signers } = input;
  const signer = signers[0]!;
  const event = input.event ?? "workflow_job";
  const parsed = WorkflowJobPayload.safeParse(input.json);
  if (!parsed.success) {
    return { kind: "rejected", reason: onlyOutOfBounds(parsed.error) ? "out_of_bounds" : "invalid_payload", problems: parsed.error };
  }
  const jobEvent = jobEventFrom(parsed.data);
  if (!jobEvent) {
    log({ event: "webhook_ignored", delivery_id: id, github_event: event, action: parsed.data.action, ...input.logFields });
    return { kind: "ignored", reason: `workflow_job status '${parsed.data.workflow_job.status}' is not handled` };
  }

  // Only the signers' scale sets, and their parents' where we registered that they may use them.
  const candidates = inScope(
    directory.scaleSets,
    signers.map((e) => reporterOf(e, directory.entities)),
  );
  const route = routeJob(jobEvent.labels, candidates);
  // Rejections this isolate counted ride along in the batch: no round trip of their own.
  const rejections = drainCounterStatements(env.DB, input.receivedAt, MAX_COUNTERS_PER_FLUSH, WEBHOOK_REJECTED);
  let result: IntakeResult;
  try {
    // The job is the signer's own (its most specific one: the same one every delivery of this
    // job through the same hooks names), and only its scope's runners may be linked to it.
    result = await recordWorkflowJob(env.DB, {
      deliveryId: id,
      event,
      action: parsed.data.action,
      receivedAt: input.receivedAt,
      job: { ...jobEvent, source: "webhook", entityId: signer.id, scaleSetId: route?.id ?? null },
      reach: candidates.map((s) => s.id),
      // A job row goes at most RETENTION_DAYS after its last change (completed, or waiting
      // unmatched), so an older job without a row is a replay of a captured delivery.
      createdSince: input.receivedAt - input.retentionDays * DAY_MS,
      alongside: rejections.statements,
    });
  } catch (e) {
    rejections.restore();
    throw e;
  }

  if (result.kind === "too_old") {
    return {
      kind: "rejected",
      reason: "job_too_old",
      details: {
        reason: `the job was created at ${new Date(jobEvent.queuedAt!).toISOString()}, before the ${input.retentionDays}-day retention window (RETENTION_DAYS), and is not known here: a replay of an old delivery`,
        job_id: jobEvent.id,
      },
    };
  }
  if (result.kind === "recorded") observeJobDurations(result.observed);
  if (result.kind === "duplicate") {
    log({ event: "webhook_duplicate", delivery_id: id, job_id: jobEvent.id, ...input.logFields });
    return { kind: "duplicate", jobId: jobEvent.id };
  }

  // One line per accepted delivery: what it said and where the job went. A routed job's line is
  // debug: the job row, GitHub's delivery log (our answer names the scale set) and
  // edgerunner_webhooks_total already say it arrived, and a line per delivery is the largest
  // part of intake's cost in a burst. A job no scale set takes is info: someone must act on it.
  // So is a routed job starting (`in_progress`): the one line that ties a job to the runner that
  // took it, its runner's "job" step at info (docs/observability.md "What is logged at info").
  (result.scaleSetId && parsed.data.action !== "in_progress" ? logger.debug : logger.info)({
    event: "webhook_accepted",
    delivery_id: id,
    github_event: event,
    action: parsed.data.action,
    entity: signer.id,
    job_id: jobEvent.id,
    status: result.status,
    job: result.scaleSetId ? "routed" : "unmatched",
    scale_set: result.scaleSetId,
    labels: jobEvent.labels,
    // The runner that took the job: an instance name when it is one of ours (a job's story goes on under it).
    ...(jobEvent.runnerName && { instance: jobEvent.runnerName }),
    ...input.logFields,
  });
  return {
    kind: "accepted",
    jobId: jobEvent.id,
    status: result.status,
    scaleSetId: result.scaleSetId,
    nudge: nudgeTargets(result),
    entityId: signer.id,
  };
}
