import { type JobObservation, jobObservations } from "../../intake/job-durations";
import { statusRank } from "../../intake/job-event";
import { type JobState, jobMergeRules, type MergeRule } from "../../intake/job-merge";
import { type JobStatus, jobStatuses } from "./schema";

/**
 * Webhook deliveries: what an accepted one writes.
 *
 * recordWorkflowJob writes one `workflow_job` delivery as a single D1 batch (one transaction, one round trip):
 *
 * 1. upsert the delivery's entity's row of the job, merged by the rules of intake/job-merge.ts
 *    (no other entity's row is ever touched: docs/security.md; a completed event's runner name
 *    by a statement of its own just before, see RUNNER_NAME);
 * 2. link the runner's instance to that row, when the runner is ours and of a scale set the
 *    delivery's signer may reach;
 * 3. record the delivery id with its outcome (`ON CONFLICT DO NOTHING … RETURNING`: no row
 *    back means the delivery was seen before).
 *
 * Before step 1, the job's queue-time and run-time observations (intake/job-durations.ts), each
 * only if step 1 is about to move the row past the status it measures: read in the same
 * transaction just before the merge, the row's status says exactly that, so each job is
 * counted once whatever the order and number of its deliveries.
 *
 * Steps 1 and 2 only act while the delivery id is not recorded. A batch is one transaction
 * and D1 runs a database's transactions one at a time, so of two copies of a delivery
 * (sequential or concurrent) exactly one acts and the other changes nothing, without a
 * read before the write. Nor is there a read-modify-write of the job: D1 applies the merge
 * to whatever the row holds at that moment.
 */

const columns: Record<keyof JobState, string> = {
  source: "source",
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
  problem: "problem",
};

const fields = Object.keys(columns) as (keyof JobState)[];

/** Values for the INSERT; ids of rows that may have been deleted meanwhile resolve to NULL. */
const valueSql: Partial<Record<keyof JobState, string>> = {
  entityId: "(SELECT id FROM entities WHERE id = ?)",
  scaleSetId: "(SELECT id FROM scale_sets WHERE id = ? AND enabled = 1)",
};

const NOT_SEEN = "NOT EXISTS (SELECT 1 FROM webhook_deliveries WHERE delivery_id = ?)";

/** The row of the delivery's entity for its job: bound entity, source, id. */
const THE_ROW = "entity_id = ? AND source = ? AND id = ?";

/** The statuses below `status`, quoted for SQL. */
const below = (status: JobStatus) => jobStatuses.filter((s) => statusRank[s] < statusRank[status]).map((s) => `'${s}'`);

/**
 * The upsert for an event of status `incoming`. "Is the event further along than the row?"
 * is spelled out as the statuses below `incoming`: short SQL, and one statement per status
 * for D1 to keep prepared.
 */
function upsertFor(incoming: JobStatus, existingOnly: boolean): string {
  const further = furtherThan(incoming);
  const mergeSql = (column: string, rule: MergeRule): string | null => {
    if (column === "runner_name" && incoming === "completed") return null;
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
WHERE ${NOT_SEEN}${existingOnly ? ` AND EXISTS (SELECT 1 FROM jobs WHERE ${THE_ROW})` : ""}
ON CONFLICT(entity_id, source, id) DO UPDATE SET ${[
    ...fields.map((f) => mergeSql(columns[f], jobMergeRules[f])).filter((s) => s !== null),
    "updated_at = excluded.updated_at",
  ].join(", ")}
RETURNING scale_set_id, status`;
}

/** The row's status is below `incoming`: the event is further along (bound on the row before the merge). */
function furtherThan(incoming: JobStatus): string {
  const lower = below(incoming);
  return lower.length ? `jobs.status IN (${lower.join(", ")})` : "0";
}

/**
 * A `completed` event's runner name, merged apart from its upsert and only when it changes the
 * row: the name is indexed, and an upsert that sets it rewrites its index entry even when it
 * stays the same, which for a completed job (named by its `in_progress`) it nearly always does.
 * Runs just before the upsert, so it sees the row as the upsert does. Bound: entity, source, id,
 * runner name, delivery id.
 */
const MERGED_RUNNER_NAME = `CASE WHEN ${furtherThan("completed")} THEN COALESCE(NULLIF(?4, ''), runner_name) ELSE COALESCE(NULLIF(runner_name, ''), ?4) END`;
const RUNNER_NAME = `UPDATE jobs SET runner_name = ${MERGED_RUNNER_NAME}
WHERE entity_id = ?1 AND source = ?2 AND id = ?3 AND NOT EXISTS (SELECT 1 FROM webhook_deliveries WHERE delivery_id = ?5)
  AND ${MERGED_RUNNER_NAME} IS NOT runner_name`;

const UPSERT_JOB = Object.fromEntries(jobStatuses.map((s) => [s, upsertFor(s, false)])) as Record<JobStatus, string>;
/** The same, for an event that may only advance a row that exists (see IntakeInput.createdSince). */
const ADVANCE_JOB = Object.fromEntries(jobStatuses.map((s) => [s, upsertFor(s, true)])) as Record<JobStatus, string>;
/** Read in the same transaction as an ADVANCE_JOB: whether it had a row to advance, and whether the delivery was seen. */
const ADVANCE_CHECK = `SELECT EXISTS (SELECT 1 FROM jobs WHERE ${THE_ROW}) AS has_row,
  EXISTS (SELECT 1 FROM webhook_deliveries WHERE delivery_id = ?) AS seen`;

/**
 * One observation of the job's (OBSERVE_JOB[status]: the status it measures reaching), under
 * the scale set the merge leaves on the row (its own, else the delivery's route while enabled),
 * if the row is below that status or absent and about to be created (`?8`: the delivery may
 * create a row). Nothing when the delivery was seen or the job has no scale set. Read in the
 * delivery's transaction, so each job is observed once; the observation itself goes to the
 * isolate's pending ones (the caller hands IntakeResult.observed to observability/op-counters.ts
 * `observe`), written in bulk.
 * Bound: metric, bucket, seconds, entity, source, id, the delivery's scale set, may create, delivery id.
 */
const OBSERVE_JOB = Object.fromEntries(
  (["in_progress", "completed"] as const).map((status) => [
    status,
    `SELECT ?1 AS metric, t.scale_set_id, ?2 AS bucket, ?3 AS seconds
  FROM (SELECT COALESCE((SELECT scale_set_id FROM jobs WHERE entity_id = ?4 AND source = ?5 AND id = ?6),
                        (SELECT id FROM scale_sets WHERE id = ?7 AND enabled = 1)) AS scale_set_id,
               (SELECT status FROM jobs WHERE entity_id = ?4 AND source = ?5 AND id = ?6) AS status) t
 WHERE t.scale_set_id IS NOT NULL
   AND (t.status IN (${below(status).join(", ")}) OR (t.status IS NULL AND ?8))
   AND NOT EXISTS (SELECT 1 FROM webhook_deliveries WHERE delivery_id = ?9)`,
  ]),
) as Record<JobObservation["status"], string>;

const RECORD_DELIVERY = `INSERT INTO webhook_deliveries (delivery_id, event, action, received_at, outcome, job_id)
SELECT ?, ?, ?, ?, CASE WHEN scale_set_id IS NULL THEN 'unmatched' ELSE 'routed' END, id FROM jobs WHERE ${THE_ROW}
ON CONFLICT(delivery_id) DO NOTHING
RETURNING delivery_id`;

// An ephemeral runner serves one job: link it unless it is already linked to another. Only an
// instance of a scale set the delivery's signer may reach (`reach`, a JSON array of scale set
// ids): a delivery signed by one entity that names another's runner links nothing, so it cannot
// send that runner to deletion as done with a job. A runner of a scaleset_api scale set is
// linked only by its queue's events (a webhook for the same job carries another id: linking it
// would show the job started while the queue's row still waits).
const LINKED_ROW = "(SELECT seq FROM jobs WHERE entity_id = ?2 AND source = ?3 AND id = ?1)";
const LINKABLE = `name = ?5 AND scale_set_id IN (SELECT value FROM json_each(?6))
  AND NOT EXISTS (SELECT 1 FROM webhook_deliveries WHERE delivery_id = ?7)
  AND (?8 = 'scaleset_message' OR NOT EXISTS (SELECT 1 FROM scale_sets s WHERE s.id = instances.scale_set_id AND s.intake = 'scaleset_api'))`;
// Written only while the runner has no job: the later deliveries of its job (completed) find it
// linked already and write nothing (each index the link sets is a billed row written).
const LINK_INSTANCE = `UPDATE instances SET job_id = ?1, job_seq = ${LINKED_ROW}, updated_at = ?4
WHERE ${LINKABLE} AND job_id IS NULL`;
/** After the link: the runner's scale set when it is linked to this job (just now or before). */
const LINKED_INSTANCE = `SELECT scale_set_id FROM instances WHERE ${LINKABLE} AND job_seq = ${LINKED_ROW}`;

export interface IntakeInput {
  deliveryId: string;
  /**
   * What carried the event: `workflow_job` (a webhook, or one fetched back by delivery recovery;
   * the default), `scaleset_message` (a runner scale set API queue item,
   * scaleset/listener/listener-driver.ts) or `backstop` (a job the recovery backstop found at
   * GitHub, src/recovery/backstop.ts): same merge, counted apart.
   */
  event?: "workflow_job" | "scaleset_message" | "backstop";
  action: string;
  job: JobState;
  /** The scale sets whose instances this event may link to its job: those its signer may reach. */
  reach: readonly string[];
  receivedAt: number;
  /**
   * A job GitHub created before this (unix ms) may advance its row but never create one: its row
   * may have been pruned by retention, and a replay of its old `queued` must not bring it back.
   */
  createdSince?: number;
  /** Statements to run in the same batch, after the delivery's own (counts that ride along). */
  alongside?: D1PreparedStatement[];
}

export type IntakeResult =
  /** The delivery id was seen before: nothing changed. */
  | { kind: "duplicate" }
  /** The job was created before IntakeInput.createdSince and has no row: nothing was written. */
  | { kind: "too_old" }
  | {
      kind: "recorded";
      /** The job's scale set after the merge (a job keeps the one it was first routed to). */
      scaleSetId: string | null;
      status: JobState["status"];
      /** The scale set of our instance now running (or done with) the job, if any. */
      instanceScaleSetId: string | null;
      /** The job's durations this delivery observed (once per job: see OBSERVE_JOB), for the histograms. */
      observed: { metric: string; scaleSetId: string; bucket: number; seconds: number }[];
    };

export async function recordWorkflowJob(db: D1Database, input: IntakeInput): Promise<IntakeResult> {
  const { deliveryId, job, receivedAt } = input;
  const values = fields.map((f) => (f === "labels" ? JSON.stringify(job.labels) : (job[f] ?? null)));
  const row = [job.entityId, job.source, job.id];
  const tooOld = input.createdSince !== undefined && job.queuedAt !== null && job.queuedAt < input.createdSince;

  const statements: D1PreparedStatement[] = [];
  if (tooOld) statements.push(db.prepare(ADVANCE_CHECK).bind(...row, deliveryId));
  const observeAt = statements.length;
  const observations = jobObservations(job);
  for (const o of observations) {
    statements.push(
      db.prepare(OBSERVE_JOB[o.status]).bind(o.metric, o.bucket, o.seconds, ...row, job.scaleSetId, tooOld ? 0 : 1, deliveryId),
    );
  }
  if (job.status === "completed") statements.push(db.prepare(RUNNER_NAME).bind(...row, job.runnerName, deliveryId));
  const upsertAt = statements.length;
  statements.push(
    tooOld
      ? db.prepare(ADVANCE_JOB[job.status]).bind(...values, receivedAt, receivedAt, deliveryId, ...row)
      : db.prepare(UPSERT_JOB[job.status]).bind(...values, receivedAt, receivedAt, deliveryId),
  );
  const links = job.runnerName !== null && statusRank[job.status] >= statusRank.in_progress;
  const event = input.event ?? "workflow_job";
  if (links) {
    const linkArgs = [job.id, job.entityId, job.source, receivedAt, job.runnerName, JSON.stringify(input.reach), deliveryId, event];
    statements.push(db.prepare(LINK_INSTANCE).bind(...linkArgs), db.prepare(LINKED_INSTANCE).bind(...linkArgs));
  }
  const recordAt = statements.length;
  statements.push(db.prepare(RECORD_DELIVERY).bind(deliveryId, event, input.action, receivedAt, ...row));
  statements.push(...(input.alongside ?? []));

  const results = await db.batch<Record<string, unknown>>(statements);
  if (results[recordAt]!.results.length === 0) {
    const check = tooOld ? (results[0]!.results[0] as { has_row: number; seen: number }) : null;
    return check && !check.seen && !check.has_row ? { kind: "too_old" } : { kind: "duplicate" };
  }
  const upserted = results[upsertAt]!.results[0] as { scale_set_id: string | null; status: JobState["status"] };
  const instance = links ? (results[upsertAt + 2]!.results[0] as { scale_set_id: string } | undefined) : undefined;
  return {
    kind: "recorded",
    scaleSetId: upserted.scale_set_id,
    status: upserted.status,
    instanceScaleSetId: instance?.scale_set_id ?? null,
    observed: observations.flatMap((_, i) =>
      results[observeAt + i]!.results.map((o) => ({
        metric: String(o.metric),
        scaleSetId: String(o.scale_set_id),
        bucket: Number(o.bucket),
        seconds: Number(o.seconds),
      })),
    ),
  };
}
