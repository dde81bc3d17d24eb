/**
 * Carries out one Forgejo poll (poller.ts decides what it means) against Forgejo and D1, and
 * reports its outcome as plain data. In order: list the scope's waiting jobs, write the rows of
 * the jobs this scale set takes (the D1 key makes a second take of the same job a no-op), then
 * move on the held jobs that left the queue. A failure before the writes leaves everything as it
 * was; every write is idempotent, so the next poll finishes what one left half done.
 */
import { applyPolledJobChanges, type PolledJob, type PolledJobChange, recordPolledJobs } from "../../db/jobs/forgejo-job-store";
import type { ScaleSetRecord } from "../../db/scaleset/snapshot-store";
import { GithubRateLimitedError } from "../../github/errors";
import { errorText, logEvent as log } from "../../observability/log";
import type { ForgejoJob } from "./forgejo-api";
import { type HeldJob, heldAfter, needsRunnerList, type PollerState, type PollInstance, type PollOutcome, pollPlan } from "./poller";
import type { ForgejoJobsPort } from "./runner-port";

export interface PollContext {
  db: D1Database;
  port: ForgejoJobsPort;
  scaleSet: ScaleSetRecord;
  state: PollerState;
  instances: readonly PollInstance[];
  now: () => number;
}

/** The row a polled job gets: a repository entity names its repository; wider scopes list only Forgejo's repository id. */
export function polledJob(entity: ScaleSetRecord["entity"], j: ForgejoJob): PolledJob {
  const isRepo = entity.kind === "repository";
  return {
    id: j.id,
    runId: j.run_id,
    attempt: j.attempt,
    name: j.name,
    labels: j.runs_on,
    repository: isRepo ? `${entity.owner}/${entity.name}` : `repo_id:${j.repo_id}`,
    owner: entity.kind === "enterprise" ? "" : entity.owner,
  };
}

/** One poll; `changed`: jobs were taken or left, so the object plans again at once. */
export async function runPoll(ctx: PollContext): Promise<{ outcome: PollOutcome; changed: boolean }> {
  const ss = ctx.scaleSet;
  let listed: { jobs: ForgejoJob[]; invalid: number };
  let runnerIds: Set<number> | null = null;
  try {
    listed = await ctx.port.waitingJobs();
    if (needsRunnerList(ctx.state.held)) runnerIds = await ctx.port.runnerIds();
  } catch (err) {
    const retryAt = err instanceof GithubRateLimitedError ? err.retryAt : undefined;
    return { outcome: { ok: false, error: errorText(err), ...(retryAt !== undefined && { retryAt }) }, changed: false };
  }
  const plan = pollPlan(ctx.state.held, listed.jobs, [ss.name, ...ss.labels], ctx.instances, runnerIds);
  const at = ctx.now();
  const seqs = await recordPolledJobs(ctx.db, {
    entityId: ss.entity.id,
    scaleSetId: ss.id,
    jobs: plan.take.map((j) => polledJob(ss.entity, j)),
    at,
  });
  const taken: HeldJob[] = plan.take
    .filter((j) => seqs.has(j.id))
    .map((j) => ({ id: j.id, seq: seqs.get(j.id)!, handle: j.handle, taken: false }));
  const changes: PolledJobChange[] = plan.departures.map((d) => ({
    seq: d.job.seq,
    status: d.becomes === "in_progress" ? "in_progress" : "completed",
    conclusion: d.becomes === "left_queue" ? "left_queue" : null,
    detach: d.becomes === "left_queue" ? d.instance : null,
  }));
  await applyPolledJobChanges(ctx.db, ss.id, changes, at);
  for (const d of plan.departures)
    log({ event: "forgejo_job_departed", scale_set: ss.id, job_id: d.job.id, seq: d.job.seq, becomes: d.becomes, instance: d.instance });
  if (taken.length || plan.departures.length || listed.invalid)
    log({
      event: "forgejo_poll",
      scale_set: ss.id,
      waiting: listed.jobs.length,
      taken: taken.length,
      taken_elsewhere: plan.take.length - taken.length,
      departed: plan.departures.length,
      invalid: listed.invalid,
    });
  return {
    outcome: { ok: true, held: heldAfter(plan, taken, ctx.state.held), invalid: listed.invalid, waiting: listed.jobs.length },
    changed: taken.length > 0 || plan.departures.length > 0,
  };
}
