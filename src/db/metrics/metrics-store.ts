import { getTableName } from "drizzle-orm";
import { SUPPRESSED_REFUSALS } from "../access/audit-store";
import { hasServingTwin } from "../jobs/job-twins";
import { lastRunStatement, PRUNED_JOB_LATENCY, PRUNED_WEBHOOKS, parseLastRun, type RetentionRun } from "../retention/retention-store";
import { schema } from "../schema";
import { type HistogramSeriesRow, histogramRowsStatement } from "./histogram-store";
import { usageSinceStatement } from "./usage-store";

/**
 * Everything `GET /metrics` shows, read in one D1 batch (one round trip, whatever the database
 * holds): current state (scale sets, instances, jobs, credentials), the `counters` table, the
 * histograms kept in D1 (`metric_histograms`), the rows per table, the database size and the
 * last retention run.
 */

export interface MetricsScaleSet {
  id: string;
  name: string;
  enabled: number;
  min_idle_runners: number;
  max_runners: number;
  provider: string;
  entity: string;
}

export interface MetricsCredential {
  id: string;
  name: string;
  endpoint_name: string;
  health: string | null;
  rate_limit_limit: number | null;
  rate_limit_remaining: number | null;
  rate_limit_used: number | null;
  rate_limit_reset_at: number | null;
  rate_limit_resource: string | null;
  blocked_until: number | null;
  /** What GitHub's refusals taught its budget (github_budget; null: nothing). */
  learned_points_per_minute: number | null;
  learned_at: number | null;
}

export interface MetricsData {
  scaleSets: MetricsScaleSet[];
  /** Instances not yet deleted; `jit_waiting`: those whose on-boot JIT mint is claimed and not done (in line for the GitHub budget, or at GitHub). */
  instances: { scale_set_id: string; status: string; runner_status: string; n: number; jit_waiting: number }[];
  /** `refused`: of those, the ones their shaped scale set refused (jobs.refusal), which no machine will ever serve. */
  jobs: { scale_set_id: string; status: string; n: number; refused: number }[];
  /** Deliveries ever stored, by outcome: those in D1 plus those retention pruned. */
  deliveries: { outcome: string; n: number }[];
  counters: { name: string; value: number }[];
  credentials: MetricsCredential[];
  /**
   * Per scale set: `b<i>` = jobs that started within the i-th bucket, `sum_ms`, `n`; the jobs in
   * D1 plus those retention pruned.
   */
  latency: Record<string, number | string>[];
  /** The histograms kept in D1 (observability/histograms.ts): every row, by metric, scale set and bucket. */
  histograms: HistogramSeriesRow[];
  /** Refused admin writes the audit trail's throttle did not record, per actor (`audit.refusals_suppressed|<actor>` counters). */
  auditRefusalsSuppressed: { actor: string; n: number }[];
  /** Rows in every table of the schema. */
  tableRows: Record<string, number>;
  /** The database's size as D1 reports it (`meta.size_after`), or null if it does not. */
  databaseBytes: number | null;
  lastPrune: RetentionRun | null;
  /** Delivery recovery's watches (src/recovery/): what each last found. */
  recoveryWatches: { key: string; kind: string; entity_id: string | null; status: string }[];
  /** Delivery recovery's last pass, if it ran. */
  recoveryLastPass: { at: number; duration_ms: number; calls: number } | null;
  /** This month's usage in Cloudflare's units by unit and cause (usage_days, from the first of the month UTC). */
  usage: { unit: string; kind: string; value: number }[];
}

function latencyQuery(bucketsSeconds: readonly number[]): string {
  const buckets = bucketsSeconds.map((le, i) => `SUM(CASE WHEN lat <= ${le * 1000} THEN 1 ELSE 0 END) AS b${i}`).join(", ");
  return `SELECT COALESCE(scale_set_id, '') AS scale_set_id, ${buckets}, SUM(lat) AS sum_ms, COUNT(*) AS n
FROM (SELECT scale_set_id, MAX(0, started_at - queued_at) AS lat FROM jobs WHERE started_at IS NOT NULL AND queued_at IS NOT NULL)
GROUP BY 1`;
}

// The deliveries and jobs queries already read every row of their table: their totals come from
// those groups rather than from a second scan.
const COUNTED_BY_GROUPS = new Set(["webhook_deliveries", "jobs"]);
const TABLES = Object.values(schema).map((t) => getTableName(t));
// One row, a column per table (D1 caps the terms of a compound SELECT, so no UNION ALL).
const TABLE_ROWS = `SELECT ${TABLES.filter((t) => !COUNTED_BY_GROUPS.has(t))
  .map((t) => `(SELECT COUNT(*) FROM ${t}) AS ${t}`)
  .join(", ")}`;

export async function readMetricsData(db: D1Database, latencyBucketsSeconds: readonly number[], monthStart: string): Promise<MetricsData> {
  const results = await db.batch<Record<string, unknown>>([
    db.prepare(
      `SELECT s.id, s.name, s.enabled, s.min_idle_runners, s.max_runners, p.name AS provider,
              e.kind || ':' || e.owner || CASE WHEN e.name = '' THEN '' ELSE '/' || e.name END AS entity
       FROM scale_sets s JOIN providers p ON p.id = s.provider_id JOIN entities e ON e.id = s.entity_id ORDER BY s.id`,
    ),
    db.prepare(
      `SELECT scale_set_id, status, runner_status, COUNT(*) AS n,
              SUM(CASE WHEN jit_on_boot = 1 AND jit_config_enc IS NULL AND jit_claimed_at IS NOT NULL THEN 1 ELSE 0 END) AS jit_waiting
       FROM instances WHERE status != 'deleted' GROUP BY 1, 2, 3 ORDER BY 1, 2, 3`,
    ),
    // Each GitHub job once, however many of its entities' hooks reported it (job-twins.ts).
    db.prepare(
      `SELECT COALESCE(j.scale_set_id, '') AS scale_set_id, j.status, COUNT(*) AS n,
              SUM(CASE WHEN j.refusal IS NOT NULL THEN 1 ELSE 0 END) AS refused FROM jobs j WHERE NOT ${hasServingTwin()} GROUP BY 1, 2 ORDER BY 1, 2`,
    ),
    // Webhook deliveries by outcome; the scale set API's queue events (event 'scaleset_message')
    // share the table for their dedupe but are not deliveries: they count in the table's rows only.
    db.prepare(
      `SELECT outcome, SUM(CASE WHEN event = 'workflow_job' THEN 1 ELSE 0 END) AS n, COUNT(*) AS rows_in_table
       FROM webhook_deliveries GROUP BY 1 ORDER BY 1`,
    ),
    db.prepare(`SELECT name, value FROM counters ORDER BY name`),
    db.prepare(
      `SELECT c.id, c.name, c.endpoint_name, s.health, s.rate_limit_limit, s.rate_limit_remaining, s.rate_limit_used,
              s.rate_limit_reset_at, s.rate_limit_resource, s.blocked_until, b.learned_points_per_minute, b.learned_at
       FROM github_credentials c LEFT JOIN github_credential_state s ON s.credential_id = c.id
       LEFT JOIN github_budget b ON b.credential_id = c.id ORDER BY c.name`,
    ),
    db.prepare(latencyQuery(latencyBucketsSeconds)),
    db.prepare(TABLE_ROWS),
    histogramRowsStatement(db),
    db.prepare("SELECT key, kind, entity_id, status FROM delivery_watches ORDER BY key"),
    db.prepare("SELECT at, duration_ms, calls FROM recovery_last_pass WHERE id = 1"),
    usageSinceStatement(db, monthStart),
    // Last: its meta carries the database's size.
    lastRunStatement(db),
  ]);
  const rows = <T>(i: number) => results[i]!.results as T[];
  const jobs = rows<MetricsData["jobs"][number]>(2);
  const deliveryRows = rows<MetricsData["deliveries"][number] & { rows_in_table: number }>(3);
  const deliveries = deliveryRows.filter((d) => d.n > 0).map(({ outcome, n }) => ({ outcome, n }));
  const counters = rows<MetricsData["counters"][number]>(4);
  const sum = (xs: { n: number }[]) => xs.reduce((a, x) => a + x.n, 0);
  const tableRows: Record<string, number> = { webhook_deliveries: deliveryRows.reduce((a, d) => a + d.rows_in_table, 0), jobs: sum(jobs) };
  Object.assign(tableRows, rows<Record<string, number>>(7)[0]);
  const size = results.at(-1)!.meta.size_after;
  return {
    scaleSets: rows(0),
    instances: rows(1),
    jobs,
    deliveries: withPrunedDeliveries(deliveries, counters),
    counters,
    credentials: rows(5),
    latency: withPrunedLatency(rows(6), counters, latencyBucketsSeconds),
    histograms: rows(8),
    // The actor is everything after the family's `|` (an Access identity may itself hold a `|`).
    auditRefusalsSuppressed: counters
      .filter((c) => c.name.startsWith(`${SUPPRESSED_REFUSALS}|`))
      .map((c) => ({ actor: c.name.slice(SUPPRESSED_REFUSALS.length + 1), n: c.value })),
    tableRows,
    databaseBytes: typeof size === "number" ? size : null,
    lastPrune: parseLastRun(rows(12)),
    recoveryWatches: rows(9),
    recoveryLastPass: rows<NonNullable<MetricsData["recoveryLastPass"]>>(10)[0] ?? null,
    usage: rows(11),
  };
}

/** Adds the deliveries retention pruned (`pruned.webhooks|<outcome>` counters) to those in D1. */
function withPrunedDeliveries(inD1: MetricsData["deliveries"], counters: MetricsData["counters"]): MetricsData["deliveries"] {
  const byOutcome = new Map(inD1.map((r) => [r.outcome, r.n]));
  for (const c of counters) {
    const [family, outcome = ""] = c.name.split("|");
    if (family === PRUNED_WEBHOOKS) byOutcome.set(outcome, (byOutcome.get(outcome) ?? 0) + c.value);
  }
  return [...byOutcome].sort(([a], [b]) => a.localeCompare(b)).map(([outcome, n]) => ({ outcome, n }));
}

/** Adds the started jobs retention pruned (`pruned.job_latency|<scale set>|<le, count or sum_ms>`) to those in D1. */
function withPrunedLatency(
  inD1: MetricsData["latency"],
  counters: MetricsData["counters"],
  bucketsSeconds: readonly number[],
): MetricsData["latency"] {
  const bySet = new Map(inD1.map((r) => [String(r.scale_set_id), { ...r }]));
  for (const c of counters) {
    const [family, scaleSetId = "", key = ""] = c.name.split("|");
    if (family !== PRUNED_JOB_LATENCY) continue;
    const column = key === "count" ? "n" : key === "sum_ms" ? "sum_ms" : `b${bucketsSeconds.findIndex((le) => String(le) === key)}`;
    if (column === "b-1") continue; // a bucket no longer in the list
    const row = bySet.get(scaleSetId) ?? { scale_set_id: scaleSetId };
    row[column] = Number(row[column] ?? 0) + c.value;
    bySet.set(scaleSetId, row);
  }
  return [...bySet.values()];
}
