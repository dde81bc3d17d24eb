import { z } from "zod";
import { jobStatuses, type EntityKind, type JobStatus } from "../db/schema";
import { entityLookupKey } from "./entity-names";

/**
 * The parts of GitHub's webhook payloads the coordinator reads. Deliberately lenient:
 * GitHub adds fields and values over time (the published schemas are stricter than
 * reality), so only what we use is required and everything else passes through.
 */

/**
 * The most a signed delivery may carry in the fields we keep: what GitHub itself sends, with
 * room to spare, so a payload signed by a leaked or hostile secret cannot fill D1, the API or
 * the dashboard. Sources: GitHub account names are at most 39 characters and repository names
 * 100; runner label APIs (generate-jitconfig, add labels) take at most 100 labels; runner names
 * are at most 64 characters. GitHub publishes no limit on a label's or a job's name length, so
 * those get generous caps no real workflow reaches. README "Webhooks" lists them.
 */
export const PAYLOAD_BOUNDS = {
  /** Account logins, enterprise slugs, repository names. */
  name: 100,
  labels: 100,
  label: 256,
  runnerName: 256,
  /** Job and workflow names (matrix values make job names long). */
  title: 1024,
  /** Actions, statuses, conclusions, timestamps. */
  word: 64,
} as const;
const B = PAYLOAD_BOUNDS;

const Account = z.object({ login: z.string().min(1).max(B.name) });

/** Who a delivery is about; enough to find the entities whose secrets may have signed it. */
export const DeliverySubject = z.object({
  repository: z.object({ name: z.string().min(1).max(B.name), owner: Account }).nullish().catch(null),
  organization: Account.nullish().catch(null),
  enterprise: z.object({ slug: z.string().min(1).max(B.name) }).nullish().catch(null),
});
export type DeliverySubject = z.infer<typeof DeliverySubject>;

const optionalText = (max: number) => z.string().max(max).nullish();
const optionalInt = z.number().int().nullish();

export const WorkflowJobPayload = z.object({
  action: z.string().min(1).max(B.word),
  workflow_job: z.object({
    id: z.number().int().positive(),
    run_id: z.number().int(),
    run_attempt: optionalInt,
    name: optionalText(B.title),
    workflow_name: optionalText(B.title),
    status: z.string().min(1).max(B.word),
    conclusion: optionalText(B.word),
    labels: z.array(z.string().max(B.label)).max(B.labels),
    runner_id: optionalInt,
    runner_name: optionalText(B.runnerName),
    created_at: optionalText(B.word),
    started_at: optionalText(B.word),
    completed_at: optionalText(B.word),
  }),
  repository: z.object({ name: z.string().min(1).max(B.name), owner: Account }),
});

/** Whether a payload failed only by carrying more than PAYLOAD_BOUNDS allow. */
export const onlyOutOfBounds = (error: z.ZodError): boolean => error.issues.length > 0 && error.issues.every((i) => i.code === "too_big");
export type WorkflowJobPayload = z.infer<typeof WorkflowJobPayload>;

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

export interface EntityRef {
  kind: EntityKind;
  /** Lower-cased, as entities.lookup_key. */
  lookupKey: string;
}

/**
 * The entities a delivery may come from, most specific first: the repository, the
 * organization that owns it, the enterprise it names. The organization is taken from the
 * repository's owner rather than from `organization`, so a payload signed with one
 * repository's secret cannot claim another organization. Keys follow entityLookupKey.
 */
export function deliveryEntities(s: DeliverySubject): EntityRef[] {
  const refs: EntityRef[] = [];
  const add = (kind: EntityKind, owner: string, name?: string) => {
    const lookupKey = entityLookupKey(kind, owner, name);
    if (!refs.some((r) => r.lookupKey === lookupKey)) refs.push({ kind, lookupKey });
  };
  if (s.repository) {
    add("repository", s.repository.owner.login, s.repository.name);
    add("organization", s.repository.owner.login);
  } else if (s.organization) {
    add("organization", s.organization.login);
  }
  if (s.enterprise) add("enterprise", s.enterprise.slug);
  return refs;
}
