import { statusRank } from "../intake/job-event";
import { type JobState, jobMergeRules, type MergeRule } from "../intake/job-merge";
import { logError } from "../observability/log";
import { type JobStatus, jobStatuses } from "./schema";

/**
 * Webhook deliveries: what an accepted one writes, and the count of rejected ones.
 *
 * recordWorkflowJob writes one `workflow_job` delivery as a single D1 batch (one transaction, one round trip):
 *
 * 1. upsert the job, merged by the rules of intake/job-merge.ts;
 * 2. link the runner's instance to the job, when the runner is ours;
 * 3. record the delivery id with its outcome (`ON CONFLICT DO NOTHING … RETURNING`: no row
 *    back means the delivery was seen before).
 *
 * Steps 1 and 2 only act while the delivery id is not recorded. A batch is one transaction
 * and D1 runs a database's transactions one at a time, so of two copies of a delivery
 * (sequential or concurrent) exactly one acts and the other changes nothing, without a
 * read before the write. Nor is there a read-modify-write of the job: D1 applies the merge
 * to whatever the row holds at that moment.
 */

const columns: Record<keyof JobState, string> = {
  id: "id",
  runId: "run_id",
  runAttempt: "run_attempt",
  name: "name",
  workflowName: "workflow_name",
  repository: "repository",
  owner: "owner",
  labels: "labels",
  status: "status",
  conclusion: "conclusion",
  runnerName: "runner_name",
  runnerId: "runner_id",
  entityId: "entity_id",
  scaleSetId: "scale_set_id",
  queuedAt: "queued_at",
  startedAt: "started_at",
  completedAt: "completed_at",
};

const fields = Object.keys(columns) as (keyof JobState)[];

/** Values for the INSERT; ids of rows that may have been deleted meanwhile resolve to NULL. */
const valueSql: Partial<Record<keyof JobState, string>> = {
  entityId: "(SELECT id FROM entities WHERE id = ?)",
  scaleSetId: "(SELECT id FROM scale_sets WHERE id = ? AND enabled = 1)",
};

const NOT_SEEN = "NOT EXISTS (SELECT 1 FROM webhook_deliveries WHERE delivery_id = ?)";

/**
 * The upsert for an event of status `incoming`. "Is the event further along than the row?"
 * is spelled out as the statuses below `incoming`: short SQL, and one statement per status
 * for D1 to keep prepared.
 */
function upsertFor(incoming: JobStatus): string {
  const lower = jobStatuses.filter((s) => statusRank[s] < statusRank[incoming]).map((s) => `'${s}'`);
  const further = lower.length ? `jobs.status IN (${lower.join(", ")})` : "0";
  const mergeSql = (column: string, rule: MergeRule): string | null => {
    const x = `jobs.${column}`;
    const e = `excluded.${column}`;
    switch (rule) {
      case "advance":
        return `${column} = CASE WHEN ${further} THEN ${e} ELSE ${x} END`;
      case "progress":
        return `${column} = CASE WHEN ${further} THEN COALESCE(NULLIF(${e}, ''), ${x}) ELSE COALESCE(NULLIF(${x}, ''), ${e}) END`;
      case "fill":
        return `${column} = COALESCE(NULLIF(${x}, ''), ${e})`;
      case "keep":
        return null;
    }
  };
  return `INSERT INTO jobs (${fields.map((f) => columns[f]).join(", ")}, created_at, updated_at)
SELECT ${fields.map((f) => valueSql[f] ?? "?").join(", ")}, ?, ?
WHERE ${NOT_SEEN}
ON CONFLICT(id) DO UPDATE SET ${[
    ...fields.map((f) => mergeSql(columns[f], jobMergeRules[f])).filter((s) => s !== null),
    "updated_at = excluded.updated_at",
  ].join(", ")}
RETURNING scale_set_id, status`;
}

const UPSERT_JOB = Object.fromEntries(jobStatuses.map((s) => [s, upsertFor(s)])) as Record<JobStatus, string>;

const RECORD_DELIVERY = `INSERT INTO webhook_deliveries (delivery_id, event, action, received_at, outcome, job_id)
SELECT ?, ?, ?, ?, CASE WHEN scale_set_id IS NULL THEN 'unmatched' ELSE 'routed' END, id FROM jobs WHERE id = ?
ON CONFLICT(delivery_id) DO NOTHING
RETURNING delivery_id`;

// An ephemeral runner serves one job: link it unless it is already linked to another. A runner
// of a scaleset_api scale set is linked only by its queue's events (a webhook for the same job
// carries another id: linking it would show the job started while the queue's row still waits).
const LINK_INSTANCE = `UPDATE instances
SET job_id = ?, updated_at = CASE WHEN job_id IS NULL THEN ? ELSE updated_at END
WHERE name = ? AND (job_id IS NULL OR job_id = ?) AND ${NOT_SEEN}
  AND (? = 'scaleset_message' OR NOT EXISTS (SELECT 1 FROM scale_sets s WHERE s.id = instances.scale_set_id AND s.intake = 'scaleset_api'))
RETURNING scale_set_id`;

export interface IntakeInput {
  deliveryId: string;
  /**
   * What carried the event: `workflow_job` (a webhook, the default) or `scaleset_message` (a
   * runner scale set API queue item, scaleset/listener-driver.ts): same merge, counted apart.
   */
  event?: "workflow_job" | "scaleset_message";
  action: string;
  job: JobState;
  receivedAt: number;
}

export type IntakeResult =
  | { duplicate: true }
  | {
      duplicate: false;
      /** The job's scale set after the merge (a job keeps the one it was first routed to). */
      scaleSetId: string | null;
      status: JobState["status"];
      /** The scale set of our instance now running (or done with) the job, if any. */
      instanceScaleSetId: string | null;
    };

export async function recordWorkflowJob(db: D1Database, input: IntakeInput): Promise<IntakeResult> {
  const { deliveryId, job, receivedAt } = input;
  const values = fields.map((f) => (f === "labels" ? JSON.stringify(job.labels) : (job[f] ?? null)));

  const statements = [db.prepare(UPSERT_JOB[job.status]).bind(...values, receivedAt, receivedAt, deliveryId)];
  const links = job.runnerName !== null && statusRank[job.status] >= statusRank.in_progress;
  const event = input.event ?? "workflow_job";
  if (links) statements.push(db.prepare(LINK_INSTANCE).bind(job.id, receivedAt, job.runnerName, job.id, deliveryId, event));
  statements.push(db.prepare(RECORD_DELIVERY).bind(deliveryId, event, input.action, receivedAt, job.id));

  const results = await db.batch<Record<string, unknown>>(statements);
  if (results[results.length - 1]!.results.length === 0) return { duplicate: true };
  const row = results[0]!.results[0] as { scale_set_id: string | null; status: JobState["status"] };
  const instance = links ? (results[1]!.results[0] as { scale_set_id: string } | undefined) : undefined;
  return {
    duplicate: false,
    scaleSetId: row.scale_set_id,
    status: row.status,
    instanceScaleSetId: instance?.scale_set_id ?? null,
  };
}

/**
 * Counts a delivery turned away (`webhook.rejected.<reason>` in `counters`), the only trace a
 * rejected delivery leaves.
 */
export async function countWebhookRejection(db: D1Database, reason: string, now = Date.now()): Promise<void> {
  try {
    await db
      .prepare(
        `INSERT INTO counters (name, value, updated_at) VALUES (?, 1, ?)
         ON CONFLICT(name) DO UPDATE SET value = value + 1, updated_at = excluded.updated_at`,
      )
      .bind(`webhook.rejected.${reason}`, now)
      .run();
  } catch (err) {
    // The answer is the same either way; a lost count must not turn a 4xx into a 500.
    logError({ event: "counter_failed", counter: `webhook.rejected.${reason}`, error: String(err) });
  }
}
