import { type JobStatus, jobStatuses } from "../db/jobs/schema";
import type { WorkflowJobPayload } from "./payload";

/** What one `workflow_job` delivery says about a job, in the shape of a jobs row. */
export interface JobEvent {
  id: number;
  runId: number;
  runAttempt: number;
  name: string;
  workflowName: string | null;
  repository: string;
  owner: string;
  labels: string[];
  status: JobStatus;
  conclusion: string | null;
  runnerName: string | null;
  runnerId: number | null;
  queuedAt: number | null;
  startedAt: number | null;
  completedAt: number | null;
}

/**
 * How far along a job is. Status only ever moves up this ladder. `waiting` (held by a
 * deployment protection rule) ranks below `queued` so that a job released from waiting is
 * never left looking held, whatever order the two events arrive in: the worst case is a
 * runner started a little early, never a job left without one.
 */
export const statusRank: Record<JobStatus, number> = { waiting: 0, queued: 1, in_progress: 2, completed: 3 };

const isJobStatus = (s: string): s is JobStatus => (jobStatuses as readonly string[]).includes(s);

const time = (v: string | null | undefined): number | null => {
  if (!v) return null;
  const ms = Date.parse(v);
  return Number.isFinite(ms) ? ms : null;
};

const text = (v: string | null | undefined): string | null => (v ? v : null);

/**
 * The job's status: the payload's `workflow_job.status` (the job's state when GitHub sent
 * it), or else the action. Null for anything we do not know, which is ignored.
 */
export function eventStatus(p: Pick<WorkflowJobPayload, "action"> & { workflow_job: { status: string } }): JobStatus | null {
  if (isJobStatus(p.workflow_job.status)) return p.workflow_job.status;
  if (isJobStatus(p.action)) return p.action;
  return null;
}

/**
 * Turns a payload into a JobEvent. Fields GitHub fills with placeholders before they mean
 * anything (a queued job's `started_at` and runner) are only taken from events that far along.
 */
export function jobEventFrom(p: WorkflowJobPayload): JobEvent | null {
  const status = eventStatus(p);
  if (!status) return null;
  const j = p.workflow_job;
  const rank = statusRank[status];
  const started = rank >= statusRank.in_progress;
  const completed = status === "completed";
  const owner = p.repository.owner.login;
  return {
    id: j.id,
    runId: j.run_id,
    runAttempt: j.run_attempt ?? 1,
    name: j.name ?? "",
    workflowName: text(j.workflow_name),
    repository: `${owner}/${p.repository.name}`,
    owner,
    labels: j.labels,
    status,
    conclusion: completed ? text(j.conclusion) : null,
    runnerName: started ? text(j.runner_name) : null,
    runnerId: started && j.runner_id ? j.runner_id : null,
    queuedAt: time(j.created_at),
    startedAt: started ? time(j.started_at) : null,
    completedAt: completed ? time(j.completed_at) : null,
  };
}
