import type { RunnerSample } from "../../scaleset/runner/runner-sample";
import { type MachineShape, readMachineShape } from "../../shapes/machine-shape";
import type { ShapeBounds } from "../../shapes/shape-bounds";
import type { QueueWait } from "../../ui/charts/queue-percentiles";
import type { EntityKind } from "../directory/schema";
import type { Forge } from "../github/schema";
import type { JobStatus } from "../jobs/schema";
import type { InstanceStatus, RunnerStatus } from "../runner/schema";
import type { MinIdleScheduleEntry, ScaleSetIntake } from "../scaleset/schema";
import { SHAPE_QUEUE_WAITS, type ShapeWait, shapeWaits } from "../shapes/shape-queue-times";
import { CHART_WINDOW_MS, ENTITY_NAME, parsedLabels, QUEUE_WAITS, queueWaits, rows, SAMPLE_COLUMNS, samples } from "./dashboard-rows";

/** A scale set's dashboard page and the jobs page, each one D1 batch (see overview-queries.ts). */

export interface ScaleSetDetail {
  id: string;
  name: string;
  enabled: boolean;
  labels: string[];
  min_idle_runners: number;
  max_runners: number;
  image: string;
  flavor: string;
  os_type: string;
  os_arch: string;
  /** The lifetime watchdog and the spend guard (docs/scale-sets.md). */
  max_runner_lifetime_seconds: number;
  runner_lifetime_hard_cap_seconds: number | null;
  max_machine_hours_per_day: number | null;
  /** Min idle on a schedule: its entries, as stored. */
  schedules: MinIdleScheduleEntry[];
  /** How jobs reach it: webhook, scaleset_api (GitHub) or poll (Forgejo). */
  intake: ScaleSetIntake;
  provider: string;
  kind: EntityKind;
  entity: string;
  /** Its entity's endpoint's forge. */
  forge: Forge;
  /** A shaped scale set's bounds; null for the others. */
  shape: ShapeBounds | null;
}

export interface InstanceRow {
  name: string;
  status: InstanceStatus;
  runner_status: RunnerStatus;
  job_id: number | null;
  provider_fault: string | null;
  status_message: string | null;
  created_at: number;
  status_changed_at: number;
  /** A shaped scale set's machine: its job's shape and the flavor chosen; null for the others. */
  shape: MachineShape | null;
}

export interface TransitionRow {
  at: number;
  /** The instance's name. */
  name: string;
  field: "status" | "runner_status";
  from_value: string | null;
  to_value: string;
  reason: string;
}

export interface JobRow {
  id: number;
  name: string;
  workflow_name: string | null;
  repository: string;
  labels: string[];
  status: JobStatus;
  scale_set_id: string | null;
  queued_at: number | null;
  started_at: number | null;
  runner_name: string | null;
  /** Why intake could not take the job as it came, if so. */
  problem: string | null;
  /** Why its shaped scale set makes it no machine, if so. */
  refusal: string | null;
}

const JOB_COLUMNS =
  "id, name, workflow_name, repository, labels, status, scale_set_id, queued_at, started_at, runner_name, problem, refusal";
const jobRows = (r: D1Result | undefined): JobRow[] =>
  rows<Omit<JobRow, "labels"> & { labels: string | null }>(r).map((j) => ({ ...j, labels: parsedLabels(j.labels) }));

export interface ScaleSetPage {
  scaleSet: ScaleSetDetail;
  /** Live instances (oldest first), then the 20 most recently deleted. */
  instances: InstanceRow[];
  /** The 50 newest transitions of its instances, newest first. */
  transitions: TransitionRow[];
  /** Its 50 newest jobs. */
  jobs: JobRow[];
  /** Its jobs that started in the last 24 hours (the queue time chart). */
  queueWaits: QueueWait[];
  /** Its runners-by-state samples of the last 24 hours. */
  samples: RunnerSample[];
  /** A shaped scale set's started jobs of the last 24 hours with their machine's shape (empty for the others). */
  shapeWaits: ShapeWait[];
}

/** One scale set with its instances, recent transitions and jobs; null when there is no such scale set. */
export async function scaleSetPage(db: D1Database, id: string, now = Date.now()): Promise<ScaleSetPage | null> {
  const since = now - CHART_WINDOW_MS;
  const [sets, insts, trans, jobs, waits, sampled, shaped] = await db.batch([
    db
      .prepare(
        `SELECT s.id, s.name, s.enabled, s.labels, s.min_idle_runners, s.max_runners, s.image, s.flavor, s.os_type, s.os_arch, s.schedules,
                s.max_runner_lifetime_seconds, s.runner_lifetime_hard_cap_seconds, s.max_machine_hours_per_day,
                s.intake, s.shape, p.name AS provider, e.kind, ${ENTITY_NAME} AS entity, g.forge
         FROM scale_sets s JOIN providers p ON p.id = s.provider_id JOIN entities e ON e.id = s.entity_id
         JOIN github_endpoints g ON g.name = e.endpoint_name WHERE s.id = ?`,
      )
      .bind(id),
    db
      .prepare(
        `SELECT name, status, runner_status, job_id, provider_fault, status_message, created_at, status_changed_at, shape FROM (
           SELECT * FROM instances WHERE scale_set_id = ?1 AND deleted_at IS NULL
           UNION ALL SELECT * FROM (SELECT * FROM instances WHERE scale_set_id = ?1 AND deleted_at IS NOT NULL ORDER BY deleted_at DESC LIMIT 20))
         ORDER BY status = 'deleted', created_at`,
      )
      .bind(id),
    // The 50 newest transitions are among the live instances' and the 50 last deleted ones': each
    // of those ended with a transition no older than any of an instance deleted before them.
    db
      .prepare(
        `SELECT json_extract(t.value, '$.at') AS at, json_extract(t.value, '$.field') AS field, json_extract(t.value, '$.from') AS from_value,
                json_extract(t.value, '$.to') AS to_value, json_extract(t.value, '$.reason') AS reason, i.name
           FROM (SELECT name, transitions FROM instances WHERE scale_set_id = ?1 AND deleted_at IS NULL
                 UNION ALL SELECT * FROM (SELECT name, transitions FROM instances WHERE scale_set_id = ?1 AND deleted_at IS NOT NULL
                                          ORDER BY deleted_at DESC LIMIT 50)) i, json_each(i.transitions) t
          ORDER BY at DESC, t.key DESC LIMIT 50`,
      )
      .bind(id),
    db.prepare(`SELECT ${JOB_COLUMNS} FROM jobs WHERE scale_set_id = ? ORDER BY seq DESC LIMIT 50`).bind(id),
    db.prepare(QUEUE_WAITS).bind(since, id),
    db
      .prepare(`SELECT ${SAMPLE_COLUMNS} FROM scale_set_samples WHERE scale_set_id = ? AND at >= ? GROUP BY at ORDER BY at`)
      .bind(id, since),
    db.prepare(SHAPE_QUEUE_WAITS).bind(since, id),
  ]);
  type Row = Omit<ScaleSetDetail, "enabled" | "labels" | "schedules" | "shape"> & Record<"labels" | "shape", string | null>;
  const s = rows<Row & { enabled: number; schedules: string }>(sets)[0];
  if (!s) return null;
  return {
    scaleSet: {
      ...s,
      enabled: Boolean(s.enabled),
      labels: parsedLabels(s.labels),
      schedules: JSON.parse(s.schedules),
      shape: s.shape ? (JSON.parse(s.shape) as ShapeBounds) : null,
    },
    instances: rows<Omit<InstanceRow, "shape"> & { shape: string | null }>(insts).map((i) => ({ ...i, shape: readMachineShape(i.shape) })),
    transitions: rows<TransitionRow>(trans),
    jobs: jobRows(jobs),
    queueWaits: queueWaits(waits),
    samples: samples(sampled),
    shapeWaits: shapeWaits(shaped),
  };
}

export interface JobsPage {
  /** The 200 newest jobs (only unmatched ones when asked). */
  jobs: JobRow[];
  /** Every scale set's name, by id. */
  scaleSetNames: Map<string, string>;
}

export async function jobsPage(db: D1Database, opts: { unmatched: boolean }): Promise<JobsPage> {
  const [jobs, sets] = await db.batch([
    db.prepare(`SELECT ${JOB_COLUMNS} FROM jobs ${opts.unmatched ? "WHERE scale_set_id IS NULL" : ""} ORDER BY seq DESC LIMIT 200`),
    db.prepare(`SELECT id, name FROM scale_sets`),
  ]);
  return {
    jobs: jobRows(jobs),
    scaleSetNames: new Map(rows<{ id: string; name: string }>(sets).map((s) => [s.id, s.name])),
  };
}
