import { Hono } from "hono";
import type { AppEnv } from "../env";
import { requireBearer } from "../http/admin-auth";
import { ApiError } from "../http/errors";
import { Exposition, type Labels } from "../observability/prometheus";
import { RECONCILE_BUCKETS } from "../observability/op-counters";

/**
 * `GET /metrics`: Prometheus text, guarded by METRICS_TOKEN (not the admin token, so a scraper
 * can read numbers and do nothing else). Everything comes from D1 in one batch of aggregate
 * queries — current state (instances, jobs, credentials) and the `counters` table (outbound
 * calls, reconcile runs, rejected webhooks) — so totals survive isolate restarts and every
 * isolate answers the same. No Durable Object is woken by a scrape.
 */

export const METRICS_PATH = "/metrics";

/** Upper bounds (seconds) of the queued → in_progress latency histogram. */
export const JOB_LATENCY_BUCKETS = [1, 2, 5, 10, 20, 30, 60, 120, 300, 600, 1800, 3600];

const P = "edgerunner_";

interface ScaleSetRow {
  id: string;
  name: string;
  enabled: number;
  min_idle_runners: number;
  max_runners: number;
  provider: string;
  entity: string;
}

function latencyQuery(): string {
  const buckets = JOB_LATENCY_BUCKETS.map((le, i) => `SUM(CASE WHEN lat <= ${le * 1000} THEN 1 ELSE 0 END) AS b${i}`).join(", ");
  return `SELECT COALESCE(scale_set_id, '') AS scale_set_id, ${buckets}, SUM(lat) AS sum_ms, COUNT(*) AS n
FROM (SELECT scale_set_id, MAX(0, started_at - queued_at) AS lat FROM jobs WHERE started_at IS NOT NULL AND queued_at IS NOT NULL)
GROUP BY 1`;
}

export async function renderMetrics(db: D1Database): Promise<string> {
  const [scaleSets, instances, jobs, deliveries, counters, credentials, latency] = await db.batch([
    db.prepare(
      `SELECT s.id, s.name, s.enabled, s.min_idle_runners, s.max_runners, p.name AS provider,
              e.kind || ':' || e.owner || CASE WHEN e.name = '' THEN '' ELSE '/' || e.name END AS entity
       FROM scale_sets s JOIN providers p ON p.id = s.provider_id JOIN entities e ON e.id = s.entity_id ORDER BY s.id`,
    ),
    db.prepare(
      `SELECT scale_set_id, status, runner_status, COUNT(*) AS n FROM instances WHERE status != 'deleted' GROUP BY 1, 2, 3 ORDER BY 1, 2, 3`,
    ),
    db.prepare(`SELECT COALESCE(scale_set_id, '') AS scale_set_id, status, COUNT(*) AS n FROM jobs GROUP BY 1, 2 ORDER BY 1, 2`),
    db.prepare(`SELECT outcome, COUNT(*) AS n FROM webhook_deliveries WHERE event = 'workflow_job' GROUP BY 1 ORDER BY 1`),
    db.prepare(`SELECT name, value FROM counters ORDER BY name`),
    db.prepare(
      `SELECT c.id, c.name, c.endpoint_name, s.health, s.rate_limit_limit, s.rate_limit_remaining, s.rate_limit_used,
              s.rate_limit_reset_at, s.rate_limit_resource, s.blocked_until
       FROM github_credentials c LEFT JOIN github_credential_state s ON s.credential_id = c.id ORDER BY c.name`,
    ),
    db.prepare(latencyQuery()),
  ]);

  const m = new Exposition();
  const sets = new Map((scaleSets!.results as unknown as ScaleSetRow[]).map((s) => [s.id, s]));
  const ssLabels = (id: string): Labels => ({ scale_set_id: id, scale_set: sets.get(id)?.name ?? "" });

  // Webhooks: stored deliveries by outcome, rejected ones by reason (counted without storing them).
  const webhooks = `${P}webhooks_total`;
  const webhooksHelp = "workflow_job deliveries: routed or unmatched (stored), or rejected (with why)";
  m.declare(webhooks, webhooksHelp, "counter");
  for (const r of deliveries!.results as { outcome: string; n: number }[]) m.add(webhooks, webhooksHelp, "counter", { outcome: r.outcome, reason: "" }, r.n);

  const counterRows = counters!.results as { name: string; value: number }[];
  for (const c of counterRows) {
    if (c.name.startsWith("webhook.rejected.")) {
      m.add(webhooks, webhooksHelp, "counter", { outcome: "rejected", reason: c.name.slice("webhook.rejected.".length) }, c.value);
    }
  }

  // Jobs by status, per scale set ("" = no scale set serves the job's labels).
  const jobsName = `${P}jobs`;
  const jobsHelp = "Workflow jobs in D1 by status and scale set; scale_set_id=\"\" means unmatched";
  m.declare(jobsName, jobsHelp, "gauge");
  for (const r of jobs!.results as { scale_set_id: string; status: string; n: number }[]) {
    m.add(jobsName, jobsHelp, "gauge", { ...ssLabels(r.scale_set_id), status: r.status }, r.n);
  }

  // Scale sets: configuration, desired (from the object's last plan) and actual.
  const actual = new Map<string, number>();
  const instName = `${P}instances`;
  const instHelp = "Instances not yet deleted, by scale set, status and runner status";
  m.declare(instName, instHelp, "gauge");
  for (const r of instances!.results as { scale_set_id: string; status: string; runner_status: string; n: number }[]) {
    m.add(instName, instHelp, "gauge", { ...ssLabels(r.scale_set_id), status: r.status, runner_status: r.runner_status }, r.n);
    actual.set(r.scale_set_id, (actual.get(r.scale_set_id) ?? 0) + r.n);
  }
  const desired = new Map<string, number>();
  const calls = new Map<string, { family: string; labels: Labels; value: number }>();
  const reconcile = new Map<string, { buckets: Map<string, number>; count: number; sumMs: number }>();
  const credentialNames = new Map((credentials!.results as { id: string; name: string }[]).map((c) => [c.id, c.name]));
  for (const c of counterRows) {
    const [family, a = "", b = ""] = c.name.split("|");
    if (family === "scaleset.desired") desired.set(a, c.value);
    else if (family === "github.calls" || family === "github.errors") {
      calls.set(c.name, { family: family === "github.calls" ? `${P}github_operations_total` : `${P}github_errors_total`, labels: { operation: a, credentials: credentialNames.get(b) ?? b }, value: c.value });
    } else if (family === "shim.calls" || family === "shim.errors") {
      calls.set(c.name, { family: family === "shim.calls" ? `${P}provider_operations_total` : `${P}provider_errors_total`, labels: { operation: a, provider: b }, value: c.value });
    } else if (family?.startsWith("reconcile.")) {
      const r = reconcile.get(a) ?? { buckets: new Map(), count: 0, sumMs: 0 };
      if (family === "reconcile.bucket") r.buckets.set(b, c.value);
      else if (family === "reconcile.count") r.count = c.value;
      else if (family === "reconcile.duration_ms") r.sumMs = c.value;
      reconcile.set(a, r);
    }
  }

  const info = `${P}scaleset_info`;
  const g = (name: string, help: string, labels: Labels, v: number) => m.add(`${P}${name}`, help, "gauge", labels, v);
  m.declare(info, "One per scale set, with its entity and provider", "gauge");
  for (const s of sets.values()) {
    const l = ssLabels(s.id);
    m.add(info, "One per scale set, with its entity and provider", "gauge", { ...l, entity: s.entity, provider: s.provider }, 1);
    g("scaleset_enabled", "1 if the scale set creates runners, 0 if paused", l, s.enabled ? 1 : 0);
    g("scaleset_max_runners", "Most instances the scale set may have", l, s.max_runners);
    g("scaleset_min_idle_runners", "Idle runners the scale set keeps ready", l, s.min_idle_runners);
    const d = desired.get(s.id);
    if (d !== undefined) g("scaleset_desired_runner_count", "Runners the scale set's last reconcile wanted (starting or idle)", l, d);
    g("scaleset_actual_runner_count", "Instances of the scale set not yet deleted (D1)", l, actual.get(s.id) ?? 0);
  }

  for (const [family, help] of [
    [`${P}github_operations_total`, "GitHub REST requests, by operation and credentials"],
    [`${P}github_errors_total`, "GitHub REST requests that failed (no answer, or an answer the operation did not expect)"],
    [`${P}provider_operations_total`, "Provider shim requests, by operation and provider"],
    [`${P}provider_errors_total`, "Provider shim requests that failed"],
  ] as const) {
    m.declare(family, help, "counter");
    for (const c of calls.values()) if (c.family === family) m.add(family, help, "counter", c.labels, c.value);
  }

  // GitHub credentials: health and the last rate-limit figures GitHub sent.
  const credHelp = {
    healthy: "1 while GitHub accepts the credentials, 0 once it refused them",
    limit: "GitHub's rate limit for the credentials (last seen)",
    remaining: "Requests left in the current rate-limit window (last seen)",
    used: "Requests used in the current rate-limit window (last seen)",
    reset: "When the rate-limit window resets, unix seconds",
  };
  m.declare(`${P}github_credentials_healthy`, credHelp.healthy, "gauge");
  for (const c of credentials!.results as Record<string, any>[]) {
    const l: Labels = { credentials: c.name, endpoint: c.endpoint_name };
    g("github_credentials_healthy", credHelp.healthy, l, c.health === "failing" ? 0 : 1);
    if (c.rate_limit_limit === null || c.rate_limit_limit === undefined) continue;
    const rl = { ...l, resource: c.rate_limit_resource ?? "core" };
    g("github_rate_limit_limit", credHelp.limit, rl, c.rate_limit_limit);
    g("github_rate_limit_remaining", credHelp.remaining, rl, c.rate_limit_remaining ?? 0);
    g("github_rate_limit_used", credHelp.used, rl, c.rate_limit_used ?? 0);
    if (c.rate_limit_reset_at !== null) g("github_rate_limit_reset_timestamp", credHelp.reset, rl, Math.floor(c.rate_limit_reset_at / 1000));
  }

  const recName = `${P}reconcile_duration_seconds`;
  const recHelp = "Wall time of a scale set's reconcile runs (all passes of one run)";
  m.declare(recName, recHelp, "histogram");
  for (const [id, r] of reconcile) {
    if (!sets.has(id)) continue;
    const buckets = RECONCILE_BUCKETS.map((le) => ({ le, count: r.buckets.get(String(le)) ?? 0 }));
    m.histogram(recName, recHelp, ssLabels(id), buckets, r.sumMs / 1000, r.count);
  }

  const latName = `${P}job_queue_latency_seconds`;
  const latHelp = "Time from a job being queued to it starting on a runner (GitHub's timestamps), jobs in D1";
  m.declare(latName, latHelp, "histogram");
  for (const r of latency!.results as Record<string, number | string>[]) {
    const id = String(r.scale_set_id);
    const buckets = JOB_LATENCY_BUCKETS.map((le, i) => ({ le, count: Number(r[`b${i}`] ?? 0) }));
    m.histogram(latName, latHelp, ssLabels(id), buckets, Number(r.sum_ms ?? 0) / 1000, Number(r.n));
  }

  return m.render();
}

export const metricsRoutes = new Hono<AppEnv>().get(METRICS_PATH, async (c) => {
  const expected = c.env.METRICS_TOKEN;
  if (!expected) throw new ApiError(503, "metrics disabled: METRICS_TOKEN is not configured");
  await requireBearer(c, expected, "edgerunner-metrics");
  return c.body(await renderMetrics(c.env.DB), 200, { "content-type": "text/plain; version=0.0.4; charset=utf-8", "cache-control": "no-store" });
});
