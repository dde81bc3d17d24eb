import { monthOf } from "../../usage/usage-report";
import type { EntityKind } from "../directory/schema";
import type { Forge } from "../github/schema";
import { hasServingTwin } from "../jobs/job-twins";
import { type UsageRow, usageRangeStatement } from "../metrics/usage-store";
import type { ScaleSetIntake } from "../scaleset/schema";

/**
 * What the setup check (src/doctor/) reads from D1, in one round trip: every credential with
 * its state, entity (with its credential pool), provider and scale set, and per scale set what its instances and jobs
 * say; and this month's usage (`usage_days`). Raw SQL: aggregates, a window function and
 * correlated subqueries, batched. Columns keep D1's snake_case names. A sealed provider secret
 * is returned sealed; opening it is the caller's.
 */

const rows = <T>(r: D1Result | undefined) => (r?.results ?? []) as T[];

export interface DoctorCredentialRow {
  id: string;
  name: string;
  auth_type: "pat" | "app";
  app_id: number | null;
  installation_id: number | null;
  endpoint_name: string;
  /** The endpoint's forge: how its API is spoken to. */
  forge: Forge;
  api_base_url: string;
  bound_api_url: string | null;
  has_webhook_secret: number;
  /** Null while GitHub has not been called with them (no state row). */
  health: "ok" | "failing" | null;
  failure_reason: string | null;
  failed_at: number | null;
  blocked_until: number | null;
}

export interface DoctorEntityRow {
  id: string;
  kind: EntityKind;
  owner: string;
  name: string;
  credentials_id: string;
  /** Its endpoint's forge. */
  forge: Forge;
  /** When the newest job its webhook deliveries brought was first recorded. */
  last_job_at: number | null;
}

export interface DoctorProviderRow {
  id: string;
  name: string;
  url: string;
  secret_enc: string;
  timeout_seconds: number;
  /** Its oldest scale set, if any: the pool the capabilities call is made for. */
  first_scale_set_id: string | null;
}

export interface DoctorScaleSetRow {
  id: string;
  name: string;
  entity_id: string;
  provider_id: string;
  labels: string[];
  enabled: boolean;
  intake: ScaleSetIntake;
  min_idle_runners: number;
  max_runners: number;
  created_at: number;
}

export interface DoctorInstanceStats {
  total: number;
  live: number;
  idle: number;
  /** A runner of the scale set reached idle or took a job, now or before (its transitions). */
  came_up: boolean;
}

export interface DoctorRows {
  credentials: DoctorCredentialRow[];
  entities: DoctorEntityRow[];
  /** Each entity's credential pool (credential ids, oldest member first), by entity id. */
  pools: Map<string, string[]>;
  providers: DoctorProviderRow[];
  scaleSets: DoctorScaleSetRow[];
  /** By scale set id; a scale set with no instance kept has no entry. */
  instances: Map<string, DoctorInstanceStats>;
  /** The newest fault of a scale set's machines, by scale set id. */
  lastFaults: Map<string, { instance: string; at: number; message: string }>;
  /** Jobs routed to a scale set and still queued, by scale set id. */
  queued: Map<string, { count: number; oldestAt: number | null }>;
  /** Queued or waiting jobs no scale set took: how many, and the newest label sets. */
  unmatched: { count: number; labelSets: { labels: string[]; count: number }[] };
  /** This month's rows of `usage_days` (UTC), its first day to today. */
  usage: UsageRow[];
}

/** Every entity with when the newest job its webhook deliveries brought was first recorded. */
const ENTITIES_WITH_LAST_JOB = `SELECT e.id, e.kind, e.owner, e.name, e.credentials_id, g.forge,
         (SELECT MAX(j.created_at) FROM jobs j WHERE j.entity_id = e.id AND j.source = 'webhook') AS last_job_at
  FROM entities e JOIN github_endpoints g ON g.name = e.endpoint_name ORDER BY e.kind, e.owner, e.name`;

/** Scale sets where a runner reached idle or took a job, now or before (its transitions). */
const SCALE_SETS_A_RUNNER_CAME_UP_IN = `SELECT DISTINCT i.scale_set_id FROM instances i
  WHERE i.runner_status IN ('idle', 'active') OR i.online_at IS NOT NULL
     OR EXISTS (SELECT 1 FROM json_each(i.transitions) t
                WHERE json_extract(t.value, '$.field') = 'runner_status' AND json_extract(t.value, '$.to') IN ('idle', 'active'))`;

/**
 * The first-run page's two "is it working yet" facts, by the same rules as the setup check: when
 * each entity last had a job delivered, and which scale sets ever had a runner come up. One batch.
 */
export async function readSetupProgress(db: D1Database): Promise<{ lastJobAt: Map<string, number>; cameUp: Set<string> }> {
  const [ents, cameUp] = await db.batch([db.prepare(ENTITIES_WITH_LAST_JOB), db.prepare(SCALE_SETS_A_RUNNER_CAME_UP_IN)]);
  return {
    lastJobAt: new Map(
      rows<DoctorEntityRow>(ents)
        .filter((e) => e.last_job_at !== null)
        .map((e) => [e.id, e.last_job_at!]),
    ),
    cameUp: new Set(rows<{ scale_set_id: string }>(cameUp).map((r) => r.scale_set_id)),
  };
}

/** How many of the unmatched jobs' label sets are read (the newest first). */
const UNMATCHED_LABEL_SETS = 5;

export async function readDoctorRows(db: D1Database, now = Date.now()): Promise<DoctorRows> {
  const month = monthOf(now);
  const [creds, ents, pools, provs, sets, stats, cameUp, faults, queued, unmatchedCount, unmatchedSets, usage] = await db.batch([
    db.prepare(
      `SELECT c.id, c.name, c.auth_type, c.app_id, c.installation_id, c.endpoint_name, e.forge, e.api_base_url, c.bound_api_url,
              c.webhook_secret_enc IS NOT NULL AS has_webhook_secret, s.health, s.failure_reason, s.failed_at, s.blocked_until
       FROM github_credentials c JOIN github_endpoints e ON e.name = c.endpoint_name
       LEFT JOIN github_credential_state s ON s.credential_id = c.id ORDER BY c.name`,
    ),
    db.prepare(ENTITIES_WITH_LAST_JOB),
    db.prepare(`SELECT entity_id, credential_id FROM entity_credentials ORDER BY added_at, credential_id`),
    db.prepare(
      `SELECT p.id, p.name, p.url, p.secret_enc, p.timeout_seconds,
              (SELECT s.id FROM scale_sets s WHERE s.provider_id = p.id ORDER BY s.created_at, s.id LIMIT 1) AS first_scale_set_id
       FROM providers p ORDER BY p.name`,
    ),
    db.prepare(
      `SELECT id, name, entity_id, provider_id, labels, enabled, intake, min_idle_runners, max_runners, created_at
       FROM scale_sets ORDER BY name, id`,
    ),
    db.prepare(
      `SELECT scale_set_id, COUNT(*) AS total, SUM(status != 'deleted') AS live,
              SUM(status = 'running' AND runner_status IN ('idle', 'online') AND job_id IS NULL) AS idle
       FROM instances GROUP BY scale_set_id`,
    ),
    db.prepare(SCALE_SETS_A_RUNNER_CAME_UP_IN),
    db.prepare(
      `SELECT scale_set_id, name, provider_fault, status_changed_at FROM (
         SELECT scale_set_id, name, provider_fault, status_changed_at,
                ROW_NUMBER() OVER (PARTITION BY scale_set_id ORDER BY status_changed_at DESC, id) AS n
         FROM instances WHERE provider_fault IS NOT NULL)
       WHERE n = 1`,
    ),
    db.prepare(
      `SELECT j.scale_set_id, COUNT(*) AS n, MIN(COALESCE(j.queued_at, j.created_at)) AS oldest
       FROM jobs j WHERE j.scale_set_id IN (SELECT id FROM scale_sets) AND j.status = 'queued' AND NOT ${hasServingTwin()} GROUP BY j.scale_set_id`,
    ),
    // A job its repository's row serves is no unmatched job of its organization's (job-twins.ts).
    db.prepare(
      `SELECT COUNT(*) AS n FROM jobs j WHERE j.scale_set_id IS NULL AND j.status IN ('queued', 'waiting') AND NOT ${hasServingTwin()}`,
    ),
    db
      .prepare(
        `SELECT j.labels, COUNT(*) AS n FROM jobs j WHERE j.scale_set_id IS NULL AND j.status IN ('queued', 'waiting') AND NOT ${hasServingTwin()}
         GROUP BY j.labels ORDER BY MAX(j.seq) DESC LIMIT ?`,
      )
      .bind(UNMATCHED_LABEL_SETS),
    usageRangeStatement(db, month.from, month.to),
  ]);
  const cameUpIds = new Set(rows<{ scale_set_id: string }>(cameUp).map((r) => r.scale_set_id));
  return {
    credentials: rows<DoctorCredentialRow>(creds),
    entities: rows<DoctorEntityRow>(ents),
    pools: rows<{ entity_id: string; credential_id: string }>(pools).reduce(
      (byEntity, r) => byEntity.set(r.entity_id, [...(byEntity.get(r.entity_id) ?? []), r.credential_id]),
      new Map<string, string[]>(),
    ),
    providers: rows<DoctorProviderRow>(provs),
    scaleSets: rows<Omit<DoctorScaleSetRow, "labels" | "enabled"> & { labels: string | null; enabled: number }>(sets).map((s) => ({
      ...s,
      labels: JSON.parse(s.labels ?? "[]") as string[],
      enabled: Boolean(s.enabled),
    })),
    instances: new Map(
      rows<{ scale_set_id: string; total: number; live: number; idle: number }>(stats).map((r) => [
        r.scale_set_id,
        { total: r.total, live: r.live ?? 0, idle: r.idle ?? 0, came_up: cameUpIds.has(r.scale_set_id) },
      ]),
    ),
    lastFaults: new Map(
      rows<{ scale_set_id: string; name: string; provider_fault: string; status_changed_at: number }>(faults).map((r) => [
        r.scale_set_id,
        { instance: r.name, at: r.status_changed_at, message: r.provider_fault },
      ]),
    ),
    queued: new Map(
      rows<{ scale_set_id: string; n: number; oldest: number | null }>(queued).map((r) => [
        r.scale_set_id,
        { count: r.n, oldestAt: r.oldest },
      ]),
    ),
    unmatched: {
      count: rows<{ n: number }>(unmatchedCount)[0]?.n ?? 0,
      labelSets: rows<{ labels: string | null; n: number }>(unmatchedSets).map((r) => ({
        labels: JSON.parse(r.labels ?? "[]") as string[],
        count: r.n,
      })),
    },
    usage: rows<UsageRow>(usage),
  };
}
