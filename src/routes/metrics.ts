import { Hono } from "hono";
import { budgetCutCounter, budgetWaitCounter } from "../db/budget/github-budget-store";
import { readMetricsData } from "../db/metrics/metrics-store";
import type { AppEnv } from "../env";
import { effectivePointsPerMinute, type GithubBudgetPolicy } from "../github/budget/budget";
import { bearerPrincipal } from "../http/admin-auth";
import { ApiError } from "../http/errors";
import { HISTOGRAMS, histogramSeries } from "../observability/histograms";
import {
  JOB_LATENCY_BUCKETS,
  pendingCounts,
  pendingHistogramRows,
  RECONCILE_BUCKETS,
  WEBHOOK_REJECTED,
} from "../observability/op-counters";
import { Exposition, type Labels } from "../observability/prometheus";
import { addRecoveryMetrics } from "../observability/recovery-metrics";
import { addUsageMetrics } from "../observability/usage-metrics";
import { REAPED_COUNTER } from "../scaleset/executor/reap-record";
import { scaleSetSettings } from "../scaleset/settings";
import { monthOf } from "../usage/usage-report";

/**
 * `GET /metrics`: Prometheus text, guarded by METRICS_TOKEN (not the admin token, so a scraper
 * can read numbers and do nothing else). Everything comes from D1 in one batch of aggregate
 * queries — current state (instances, jobs, credentials) and the `counters` table (outbound
 * calls, reconcile runs, rejected webhooks) — so totals survive isolate restarts and every
 * isolate answers the same. No Durable Object is woken by a scrape.
 */

export const METRICS_PATH = "/metrics";

const P = "edgerunner_";

/** `budget`: the GitHub budget as configured (null: none), whose figure in force is shown per credential at `now`. */
export async function renderMetrics(db: D1Database, budget: GithubBudgetPolicy | null, now: number): Promise<string> {
  const data = await readMetricsData(db, JOB_LATENCY_BUCKETS, monthOf(now).from);

  const m = new Exposition();
  const sets = new Map(data.scaleSets.map((s) => [s.id, s]));
  const ssLabels = (id: string): Labels => ({ scale_set_id: id, scale_set: sets.get(id)?.name ?? "" });

  // Webhooks: stored deliveries by outcome, rejected ones by reason (counted without storing them).
  const webhooks = `${P}webhooks_total`;
  const webhooksHelp = "workflow_job deliveries: routed or unmatched (stored), or rejected (with why)";
  m.declare(webhooks, webhooksHelp, "counter");
  for (const r of data.deliveries) m.add(webhooks, webhooksHelp, "counter", { outcome: r.outcome, reason: "" }, r.n);

  // Counts are written in bulk (rejections only alongside other writes, calls at most every 30 s):
  // add what this isolate has not written yet.
  const counterRows = withPending(data.counters, pendingCounts(""));
  const rejected = new Map<string, number>();
  for (const c of counterRows) if (c.name.startsWith(WEBHOOK_REJECTED)) rejected.set(c.name, c.value);
  for (const [name, n] of [...rejected].sort(([a], [b]) => (a < b ? -1 : 1))) {
    m.add(webhooks, webhooksHelp, "counter", { outcome: "rejected", reason: name.slice(WEBHOOK_REJECTED.length) }, n);
  }

  // Jobs by status, per scale set ("" = no scale set serves the job's labels).
  const jobsName = `${P}jobs`;
  const jobsHelp = 'Workflow jobs in D1 by status and scale set; scale_set_id="" means unmatched';
  m.declare(jobsName, jobsHelp, "gauge");
  // Refused jobs wait for a machine that never comes: only the waiting ones are worth an alert.
  const refused = new Map<string, number>();
  for (const r of data.jobs) {
    m.add(jobsName, jobsHelp, "gauge", { ...ssLabels(r.scale_set_id), status: r.status }, r.n);
    if (r.status === "queued" || r.status === "waiting") refused.set(r.scale_set_id, (refused.get(r.scale_set_id) ?? 0) + (r.refused ?? 0));
  }

  // Scale sets: configuration, desired (from the object's last plan) and actual.
  const actual = new Map<string, number>();
  const jitWaiting = new Map<string, number>();
  const instName = `${P}instances`;
  const instHelp = "Instances not yet deleted, by scale set, status and runner status";
  m.declare(instName, instHelp, "gauge");
  for (const r of data.instances) {
    m.add(instName, instHelp, "gauge", { ...ssLabels(r.scale_set_id), status: r.status, runner_status: r.runner_status }, r.n);
    actual.set(r.scale_set_id, (actual.get(r.scale_set_id) ?? 0) + r.n);
    jitWaiting.set(r.scale_set_id, (jitWaiting.get(r.scale_set_id) ?? 0) + (r.jit_waiting ?? 0));
  }
  const desired = new Map<string, number>();
  const calls = new Map<string, { family: string; labels: Labels; value: number }>();
  const reconcile = new Map<string, { buckets: Map<string, number>; count: number; sumMs: number }>();
  const credentialNames = new Map(data.credentials.map((c) => [c.id, c.name]));
  const listenerInvalid: { labels: Labels; value: number }[] = [];
  const reaped: { labels: Labels; value: number }[] = [];
  for (const c of counterRows) {
    const [family, a = "", b = ""] = c.name.split("|");
    if (family === "scaleset.desired") desired.set(a, c.value);
    else if (family === REAPED_COUNTER) reaped.push({ labels: { ...ssLabels(a), reason: b }, value: c.value });
    else if (family === "listener.invalid") listenerInvalid.push({ labels: { ...ssLabels(a), kind: b }, value: c.value });
    else if (family === "github.calls" || family === "github.errors") {
      calls.set(c.name, {
        family: family === "github.calls" ? `${P}github_operations_total` : `${P}github_errors_total`,
        labels: { operation: a, credentials: credentialNames.get(b) ?? b },
        value: c.value,
      });
    } else if (c.name === budgetWaitCounter(a)) {
      calls.set(c.name, { family: `${P}github_budget_waits_total`, labels: { credentials: credentialNames.get(a) ?? a }, value: c.value });
    } else if (c.name === budgetCutCounter(a)) {
      calls.set(c.name, { family: `${P}github_budget_cuts_total`, labels: { credentials: credentialNames.get(a) ?? a }, value: c.value });
    } else if (family === "shim.calls" || family === "shim.errors") {
      calls.set(c.name, {
        family: family === "shim.calls" ? `${P}provider_operations_total` : `${P}provider_errors_total`,
        labels: { operation: a, provider: b },
        value: c.value,
      });
    } else if (family?.startsWith("reconcile.")) {
      const r = reconcile.get(a) ?? { buckets: new Map(), count: 0, sumMs: 0 };
      if (family === "reconcile.bucket") r.buckets.set(b, (r.buckets.get(b) ?? 0) + c.value);
      // One bucket per run (op-counters.ts countReconcile): counts into every bucket from its own up.
      else if (family === "reconcile.in") {
        for (const le of RECONCILE_BUCKETS) {
          if (b !== "+Inf" && le >= Number(b)) r.buckets.set(String(le), (r.buckets.get(String(le)) ?? 0) + c.value);
        }
      } else if (family === "reconcile.count") r.count = c.value;
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
    g(
      "scaleset_jit_waiting_instances",
      "Machines whose on-boot JIT config is being minted: waiting in line for the credentials' GitHub budget, or at GitHub",
      l,
      jitWaiting.get(s.id) ?? 0,
    );
    g(
      "jobs_refused",
      "Queued or waiting jobs the shaped scale set refused (a shape outside its bounds, a malformed shape label, no flavor that fits): they get no machine",
      l,
      refused.get(s.id) ?? 0,
    );
  }

  for (const [family, help] of [
    [`${P}github_operations_total`, "GitHub REST requests, by operation and credentials"],
    [`${P}github_errors_total`, "GitHub REST requests that failed (no answer, or an answer the operation did not expect)"],
    [
      `${P}github_budget_waits_total`,
      "Times JIT configs had to wait for the credentials' GitHub budget: budget windows in which a scale set's pass wanted more than was left (before_create), and machines that waited in line for theirs (on_boot)",
    ],
    [
      `${P}github_budget_cuts_total`,
      "Times GitHub refused the credentials with a secondary rate limit and their GitHub budget was cut (refusals that arrive together count once)",
    ],
    [`${P}provider_operations_total`, "Provider shim requests, by operation and provider"],
    [`${P}provider_errors_total`, "Provider shim requests that failed"],
  ] as const) {
    m.declare(family, help, "counter");
    for (const c of calls.values()) if (c.family === family) m.add(family, help, "counter", c.labels, c.value);
  }

  const invalidName = `${P}listener_invalid_total`;
  const invalidHelp =
    'Scale set API queue items that failed validation (kind="job_item", each recorded and logged) and messages acknowledged unread (kind="message")';
  m.declare(invalidName, invalidHelp, "counter");
  for (const c of listenerInvalid) m.add(invalidName, invalidHelp, "counter", c.labels, c.value);

  const reapedName = `${P}instances_reaped_total`;
  const reapedHelp =
    "Machines the lifetime watchdog sent to deletion, by reason: stuck_after_job, never_picked_up_job, never_bootstrapped, leak, hard_cap (on its job past runner_lifetime_hard_cap_seconds)";
  m.declare(reapedName, reapedHelp, "counter");
  for (const c of reaped) m.add(reapedName, reapedHelp, "counter", c.labels, c.value);

  // GitHub credentials: health and the last rate-limit figures GitHub sent.
  const credHelp = {
    healthy: "1 while GitHub accepts the credentials, 0 once it refused them",
    limit: "GitHub's rate limit for the credentials (last seen)",
    remaining: "Requests left in the current rate-limit window (last seen)",
    used: "Requests used in the current rate-limit window (last seen)",
    reset: "When the rate-limit window resets, unix seconds",
  };
  m.declare(`${P}github_credentials_healthy`, credHelp.healthy, "gauge");
  const budgetHelp =
    "Points a minute the credentials' GitHub budget spends now: GITHUB_POINTS_PER_MINUTE, or less while a cut learned from GitHub's refusals grows back";
  m.declare(`${P}github_budget_points_per_minute`, budgetHelp, "gauge");
  for (const c of data.credentials) {
    const l: Labels = { credentials: c.name, endpoint: c.endpoint_name };
    g("github_credentials_healthy", credHelp.healthy, l, c.health === "failing" ? 0 : 1);
    if (budget) {
      const learned =
        c.learned_points_per_minute === null || c.learned_at === null
          ? null
          : { pointsPerMinute: c.learned_points_per_minute, at: c.learned_at };
      g(
        "github_budget_points_per_minute",
        budgetHelp,
        { credentials: c.name },
        effectivePointsPerMinute(budget.pointsPerMinute, learned, now),
      );
    }
    if (c.rate_limit_limit === null || c.rate_limit_limit === undefined) continue;
    const rl = { ...l, resource: c.rate_limit_resource ?? "core" };
    g("github_rate_limit_limit", credHelp.limit, rl, c.rate_limit_limit);
    g("github_rate_limit_remaining", credHelp.remaining, rl, c.rate_limit_remaining ?? 0);
    g("github_rate_limit_used", credHelp.used, rl, c.rate_limit_used ?? 0);
    if (c.rate_limit_reset_at !== null)
      g("github_rate_limit_reset_timestamp", credHelp.reset, rl, Math.floor(c.rate_limit_reset_at / 1000));
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
  for (const r of data.latency) {
    const id = String(r.scale_set_id);
    const buckets = JOB_LATENCY_BUCKETS.map((le, i) => ({ le, count: Number(r[`b${i}`] ?? 0) }));
    m.histogram(latName, latHelp, ssLabels(id), buckets, Number(r.sum_ms ?? 0) / 1000, Number(r.n));
  }

  // Durations kept in D1 as they happen (observability/histograms.ts): each job and runner counted
  // once, and kept when retention prunes the jobs and instances they came from.
  for (const h of Object.values(HISTOGRAMS)) {
    m.declare(h.name, h.help, "histogram");
    for (const { scaleSetId, histogram } of histogramSeries([...data.histograms, ...pendingHistogramRows()], h.name)) {
      if (sets.has(scaleSetId)) m.histogram(h.name, h.help, ssLabels(scaleSetId), histogram.buckets, histogram.sum, histogram.count);
    }
  }

  // Refused admin writes over the audit trail's per-actor throttle. One series per actor that was
  // ever throttled, and actors are a bounded set: ADMIN_TOKEN, the dashboard, the API tokens an
  // admin created, the identities the Access policy lets in. An unauthenticated client, which
  // could make up names, never reaches the trail.
  const suppressedName = `${P}audit_refusals_suppressed_total`;
  const suppressedHelp = "Refused admin writes (4xx) the audit trail did not record because their actor was over its per-minute limit";
  m.declare(suppressedName, suppressedHelp, "counter");
  for (const r of data.auditRefusalsSuppressed) m.add(suppressedName, suppressedHelp, "counter", { actor: r.actor }, r.n);

  // Storage: rows per table, the database size, and what the last retention run deleted.
  const rowsHelp = "Rows in each D1 table";
  m.declare(`${P}table_rows`, rowsHelp, "gauge");
  for (const [table, n] of Object.entries(data.tableRows).sort(([a], [b]) => a.localeCompare(b))) g("table_rows", rowsHelp, { table }, n);
  if (data.databaseBytes !== null) g("database_size_bytes", "Size of the D1 database, as D1 reports it", {}, data.databaseBytes);
  const prune = data.lastPrune;
  const pruneHelp = {
    at: "When the last retention run started, unix seconds",
    duration: "Wall time of the last retention run",
    deleted: "Rows the last retention run deleted, by table",
    complete: "1 if the last retention run left nothing eligible, 0 if its query cap stopped it (the next run goes on)",
    failed: "1 if a statement of the last retention run failed (see the retention_pruned log event)",
  };
  m.declare(`${P}retention_last_run_deleted_rows`, pruneHelp.deleted, "gauge");
  if (prune) {
    g("retention_last_run_timestamp_seconds", pruneHelp.at, {}, Math.floor(prune.startedAt / 1000));
    g("retention_last_run_duration_seconds", pruneHelp.duration, {}, prune.durationMs / 1000);
    for (const [table, n] of Object.entries(prune.deleted)) g("retention_last_run_deleted_rows", pruneHelp.deleted, { table }, n);
    g("retention_last_run_complete", pruneHelp.complete, {}, prune.complete ? 1 : 0);
    g("retention_last_run_failed", pruneHelp.failed, {}, prune.error === null ? 0 : 1);
  }

  addRecoveryMetrics(m, data);
  addUsageMetrics(m, data.usage);
  return m.render();
}

export const metricsRoutes = new Hono<AppEnv>().get(METRICS_PATH, async (c) => {
  // METRICS_TOKEN, or a named API token (a `read` one is enough: src/auth/api-token.ts).
  const expected = c.env.METRICS_TOKEN;
  const named = /^Bearer\s+edr_/i.test(c.req.header("authorization") ?? "");
  if (!expected && !named) throw new ApiError(503, "metrics disabled: METRICS_TOKEN is not configured");
  const metricsPrincipal = { actor: "metrics_token", scope: "read", via: "api" } as const;
  await bearerPrincipal(c, { extra: expected ? { token: expected, principal: metricsPrincipal } : undefined, realm: "edgerunner-metrics" });
  return c.body(await renderMetrics(c.env.DB, scaleSetSettings(c.env).githubBudget, Date.now()), 200, {
    "content-type": "text/plain; version=0.0.4; charset=utf-8",
    "cache-control": "no-store",
  });
});

/** The counters D1 holds plus this isolate's unwritten counts of them (and of names D1 has none of yet). */
function withPending(rows: { name: string; value: number }[], pending: Map<string, number>): { name: string; value: number }[] {
  const out = rows.map((r) => ({ name: r.name, value: r.value + (pending.get(r.name) ?? 0) }));
  const known = new Set(rows.map((r) => r.name));
  for (const [name, value] of pending) if (!known.has(name)) out.push({ name, value });
  return out.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}
