import { sql } from "drizzle-orm";
import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { createdAt, updatedAt } from "../columns";
import { entities } from "../directory/schema";
import { scaleSets } from "../scaleset/schema";

export const jobStatuses = ["queued", "waiting", "in_progress", "completed"] as const;
export type JobStatus = (typeof jobStatuses)[number];

/**
 * Where a job row came from: a `workflow_job` webhook (its id is the forge's workflow job id), a
 * runner scale set API queue message (its id is the runner request id, another number space) or a
 * forge's list of waiting jobs polled by the object (`poll`, Forgejo: its id is Forgejo's job id).
 */
export const jobSources = ["webhook", "scaleset_api", "poll"] as const;
export type JobSource = (typeof jobSources)[number];

/**
 * One entity's view of a GitHub job. A row belongs to the entity whose delivery brought it, for
 * good: it is keyed by (entity, source, GitHub's id), so a delivery signed by another entity
 * can neither advance it nor claim its id first (docs/security.md). The same job reported by a
 * repository's hook and its organization's hook is two rows, each routed in its own signer's scope.
 */
export const jobs = sqliteTable(
  "jobs",
  {
    /**
     * The row's own id (GitHub's id is not unique here: see above). No AUTOINCREMENT (migration
     * 0031): it wrote sqlite_sequence on every insert and upsert. Retention keeps the newest row,
     * so the next seq is always larger than any an instance may still name.
     */
    seq: integer("seq").primaryKey(),
    source: text("source", { enum: jobSources }).notNull().default("webhook"),
    /** GitHub's workflow job id, or the runner request id for `scaleset_api` rows. */
    id: integer("id").notNull(),
    runId: integer("run_id").notNull(),
    runAttempt: integer("run_attempt").notNull().default(1),
    name: text("name").notNull().default(""),
    workflowName: text("workflow_name"),
    repository: text("repository").notNull(),
    owner: text("owner").notNull(),
    labels: text("labels", { mode: "json" }).$type<string[]>().notNull(),
    status: text("status", { enum: jobStatuses }).notNull(),
    conclusion: text("conclusion"),
    runnerName: text("runner_name"),
    runnerId: integer("runner_id"),
    /** The entity whose delivery brought the job (its signer), or the scale set API scale set's entity. */
    entityId: text("entity_id").references(() => entities.id, { onDelete: "set null" }),
    /** Null while unmatched: no enabled scale set has all of the job's labels. */
    scaleSetId: text("scale_set_id").references(() => scaleSets.id, { onDelete: "set null" }),
    queuedAt: integer("queued_at"),
    startedAt: integer("started_at"),
    completedAt: integer("completed_at"),
    /** Why intake could not take the job as it came (a queue item that failed validation), if so. */
    problem: text("problem"),
    /** Why its shaped scale set makes it no machine (a shape outside the bounds, no flavor fits), if so. */
    refusal: text("refusal"),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    uniqueIndex("jobs_entity_source_id_idx").on(t.entityId, t.source, t.id),
    index("jobs_scale_set_status_idx").on(t.scaleSetId, t.status),
    // No index on status alone: (status, updated_at) cost a row written on every change of every
    // job (dropped, migration 0029). Retention walks the oldest rows by seq; lookups by status go
    // through the scale set's index.
    // Partial: a queued job has no runner yet, and its insert wrote an entry for the NULL (a row
    // written per job, migration 0032). Every lookup is `runner_name = …`, which implies NOT NULL.
    index("jobs_runner_name_idx").on(t.runnerName).where(sql`${t.runnerName} IS NOT NULL`),
    index("jobs_id_idx").on(t.id),
  ],
);

// WITHOUT ROWID since migration 0028 (drizzle cannot say so): one B-tree, a row written less per delivery.
export const webhookDeliveries = sqliteTable(
  "webhook_deliveries",
  {
    deliveryId: text("delivery_id").primaryKey(),
    event: text("event").notNull(),
    action: text("action"),
    receivedAt: integer("received_at").notNull(),
    outcome: text("outcome").notNull(),
    jobId: integer("job_id"),
  },
  // No index on `received_at`: it cost a row written by every delivery, and retention walks the
  // table by its key instead (src/retention/key-walk.ts, migration 0032).
);
