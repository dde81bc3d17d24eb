import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { afterEach, describe, expect, it, onTestFinished, vi } from "vitest";
import { createApp } from "../../src/app";
import { countingD1 } from "../../src/db/counting-d1";
import { clone, exampleFor } from "../fixtures/webhook-examples";
import { ADMIN_TOKEN, api, insertInstance, seed, usageRow } from "./helpers";
import { SHIM_SECRET, WEBHOOK_SECRET, world } from "./observed-world";
import { find, type Parsed, parsePrometheus, value } from "./prometheus-parse";
import { deliver, newDeliveryId } from "./webhook-setup";

const METRICS_TOKEN = "test-metrics-token";
const GHES_HOST = { "x-github-enterprise-host": "github.example.test" };

async function scrape(token: string | null = METRICS_TOKEN) {
  const res = await exports.default.fetch(
    new Request("https://edgerunner.test/metrics", { headers: token === null ? {} : { authorization: `Bearer ${token}` } }),
  );
  return { status: res.status, text: await res.text(), type: res.headers.get("content-type") ?? "" };
}

async function metrics(): Promise<Parsed> {
  const res = await scrape();
  expect(res.status, res.text).toBe(200);
  expect(res.type).toContain("text/plain; version=0.0.4");
  return parsePrometheus(res.text);
}

let jobSeq = 7_100_000;
function jobPayload(action: "queued" | "in_progress", id: number, labels: string[], times: { created: number; started?: number }) {
  const p = clone(exampleFor(action, action === "in_progress" ? 2832853555 : 289782451).payload) as any;
  p.repository.owner.login = "octo";
  p.repository.name = "app";
  p.repository.full_name = "octo/app";
  p.workflow_job.id = id;
  p.workflow_job.labels = labels;
  p.workflow_job.created_at = new Date(times.created).toISOString();
  if (times.started !== undefined) p.workflow_job.started_at = new Date(times.started).toISOString();
  if (action === "in_progress") p.workflow_job.runner_name = "someone-elses-runner";
  return p;
}

afterEach(() => vi.restoreAllMocks());

describe("GET /metrics", () => {
  it("takes only METRICS_TOKEN (not the admin token), compared as a bearer token", async () => {
    expect((await scrape(null)).status).toBe(401);
    expect((await scrape("wrong")).status).toBe(401);
    expect((await scrape(ADMIN_TOKEN)).status).toBe(401);
    const admin = await api.get("/metrics");
    expect(admin.status).toBe(401);
    expect(admin.headers.get("www-authenticate")).toContain("Bearer");
    expect((await scrape()).status).toBe(200);
  });

  it("costs one D1 round trip per scrape, whatever the database holds", async () => {
    const scrapeTrips = async () => {
      const trips = { n: 0 };
      const ctx = createExecutionContext();
      const res = await createApp().fetch(
        new Request("https://edgerunner.test/metrics", { headers: { authorization: `Bearer ${METRICS_TOKEN}` } }),
        { ...env, DB: countingD1(env.DB, trips) },
        ctx,
      );
      await waitOnExecutionContext(ctx);
      expect(res.status, await res.text()).toBe(200);
      return trips.n;
    };
    expect(await scrapeTrips()).toBe(1);
    const repo = await seed.repository();
    const scaleSet = await seed.scaleSet(`repositories/${repo.id}`);
    for (let i = 0; i < 3; i++) await insertInstance(scaleSet.id, { status: i === 0 ? "deleted" : "running" });
    expect(await scrapeTrips()).toBe(1);
  });

  it("shows this month's Cloudflare usage by cause: D1 rows from the written days and what the isolate has not written yet", async () => {
    const day = new Date().toISOString().slice(0, 10);
    await env.DB.batch([usageRow(day, "d1_rows_written", "webhook", 1000), usageRow(day, "do_active_ms", "alarm", 2500)]);
    // A request of this isolate: its Worker request is tallied and not written yet.
    expect((await api.get("/api/v1/scalesets")).status).toBe(200);
    const m = await metrics();
    expect(m.types.get("edgerunner_d1_rows_written_total")).toBe("counter");
    expect(value(m, "edgerunner_d1_rows_written_total", { operation: "webhook" })).toBeGreaterThanOrEqual(1000);
    expect(value(m, "edgerunner_do_active_seconds_total", { kind: "alarm" })).toBeGreaterThanOrEqual(2.5);
    expect(value(m, "edgerunner_worker_invocations_total", { kind: "api" })).toBeGreaterThanOrEqual(1);
    // Last month's rows are not this month's.
    await usageRow("2000-01-01", "d1_rows_read", "retention", 5).run();
    expect(value(await metrics(), "edgerunner_d1_rows_read_total", { operation: "retention" }) ?? 0).toBeLessThan(5);
  });

  it("counts per scale set the waiting jobs its shape refused, not the refused jobs that are over", async () => {
    const repo = await seed.repository();
    const shaped = await seed.scaleSet(`repositories/${repo.id}`);
    const plain = await seed.scaleSet(`repositories/${repo.id}`);
    const now = Date.now();
    const jobs: [string, string | null][] = [
      ["queued", "cpu=64 is above this scale set's 16"],
      ["waiting", "no flavor in the catalogue fits 4 vCPUs, 512 GB"],
      ["completed", "image=win is not one of this scale set's images"],
      ["queued", null],
    ];
    await env.DB.batch(
      jobs.map(([status, refusal], i) =>
        env.DB.prepare(
          "INSERT INTO jobs (id, run_id, name, repository, owner, labels, status, scale_set_id, refusal, queued_at, created_at, updated_at) VALUES (?, 1, 'build', 'octo/app', 'octo', '[]', ?, ?, ?, ?, ?, ?)",
        ).bind(7_200_000 + i, status, shaped.id, refusal, now, now, now),
      ),
    );
    const m = await metrics();
    expect(m.types.get("edgerunner_jobs_refused")).toBe("gauge");
    expect(value(m, "edgerunner_jobs_refused", { scale_set_id: shaped.id, scale_set: shaped.name })).toBe(2);
    expect(value(m, "edgerunner_jobs_refused", { scale_set_id: plain.id, scale_set: plain.name })).toBe(0);
  });

  it("reports a scripted sequence of webhooks, reconciles, shim failures and job starts, from D1 alone", async () => {
    const lines: string[] = [];
    const capture = (...args: unknown[]) => void lines.push(args.map((a) => (typeof a === "string" ? a : JSON.stringify(a))).join(" "));
    vi.spyOn(console, "log").mockImplementation(capture);
    vi.spyOn(console, "error").mockImplementation(capture);
    vi.spyOn(console, "warn").mockImplementation(capture);
    // Debug lines apart: a GitHub call that succeeded is one (docs/observability.md).
    const debugLines: string[] = [];
    vi.spyOn(console, "debug").mockImplementation((...args: unknown[]) => void debugLines.push(args.map(String).join(" ")));
    const savedLevel = process.env.LOG_LEVEL;
    process.env.LOG_LEVEL = "debug";
    onTestFinished(() => {
      if (savedLevel === undefined) delete process.env.LOG_LEVEL;
      else process.env.LOG_LEVEL = savedLevel;
    });

    // JIT configs minted by the object, so its reconciles carry the GitHub calls counted below.
    const w = await world(undefined, { jit_config_timing: "before_create" });
    const before = await metrics();
    const webhooks = (p: Parsed, outcome: string, reason = "") => value(p, "edgerunner_webhooks_total", { outcome, reason }) ?? 0;

    // Webhooks: two routed jobs, one unmatched, one duplicate, two rejected.
    const t0 = Date.now() - 60_000;
    const [j1, j2, j3] = [jobSeq++, jobSeq++, jobSeq++];
    const firstDelivery = newDeliveryId();
    const q1 = jobPayload("queued", j1, ["self-hosted", "linux"], { created: t0 });
    expect((await deliver(q1, WEBHOOK_SECRET, { delivery: firstDelivery, headers: GHES_HOST })).body).toMatchObject({ matched: true });
    expect(
      (await deliver(jobPayload("queued", j2, ["self-hosted", "linux"], { created: t0 }), WEBHOOK_SECRET, { headers: GHES_HOST })).status,
    ).toBe(200);
    expect(
      (await deliver(jobPayload("queued", j3, ["no-such-label"], { created: t0 }), WEBHOOK_SECRET, { headers: GHES_HOST })).body,
    ).toMatchObject({
      matched: false,
    });
    expect((await deliver(q1, WEBHOOK_SECRET, { delivery: firstDelivery, headers: GHES_HOST })).body).toMatchObject({ duplicate: true });
    expect((await deliver(q1, "not-the-secret", { headers: GHES_HOST })).status).toBe(401);
    expect((await deliver(q1, WEBHOOK_SECRET, { signature: null })).status).toBe(400);

    // The shim fails both creates (so creation backs off); the scale set reconciles (GitHub JIT configs, shim creates).
    await w.shim.addRule({ operation: "create", times: 2, action: { type: "respond", status: 500, body: { error: "out of capacity" } } });
    const rec = await api.post(`/api/v1/scalesets/${w.scaleSetId}/reconcile`);
    expect(rec.status, rec.text).toBe(200);

    // Job 1 starts 7 s after it was queued.
    const started = jobPayload("in_progress", j1, ["self-hosted", "linux"], { created: t0, started: t0 + 7_000 });
    expect((await deliver(started, WEBHOOK_SECRET, { headers: GHES_HOST })).status).toBe(200);

    // A dashboard login, to have its log lines in the capture too.
    const login = await exports.default.fetch(
      new Request("https://edgerunner.test/ui/login", {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: `token=${encodeURIComponent(ADMIN_TOKEN)}`,
        redirect: "manual",
      }),
    );
    expect(login.status).toBe(303);

    const m = await metrics();
    const ss = { scale_set_id: w.scaleSetId };

    expect(webhooks(m, "routed") - webhooks(before, "routed")).toBe(3);
    expect(webhooks(m, "unmatched") - webhooks(before, "unmatched")).toBe(1);
    expect(webhooks(m, "rejected", "bad_signature") - webhooks(before, "rejected", "bad_signature")).toBe(1);
    expect(webhooks(m, "rejected", "missing_headers") - webhooks(before, "rejected", "missing_headers")).toBe(1);

    expect(value(m, "edgerunner_jobs", { ...ss, status: "in_progress" })).toBe(1);
    expect(value(m, "edgerunner_jobs", { ...ss, status: "queued" })).toBe(1);
    expect(find(m, "edgerunner_jobs", { ...ss, status: "queued" })[0]!.labels.scale_set).toBe(w.scaleSetName);
    expect(value(m, "edgerunner_jobs", { scale_set_id: "", status: "queued" })).toBeGreaterThanOrEqual(1);

    // Instances by status and runner status add up to what D1 holds, and to "actual".
    const rows = (
      await env.DB.prepare("SELECT status, runner_status FROM instances WHERE scale_set_id = ? AND status != 'deleted'")
        .bind(w.scaleSetId)
        .all<{
          status: string;
          runner_status: string;
        }>()
    ).results;
    const byStatus = find(m, "edgerunner_instances", ss);
    expect(byStatus.reduce((n, s) => n + s.value, 0)).toBe(rows.length);
    for (const r of rows)
      expect(value(m, "edgerunner_instances", { ...ss, status: r.status, runner_status: r.runner_status })).toBeGreaterThan(0);
    expect(value(m, "edgerunner_scaleset_actual_runner_count", ss)).toBe(rows.length);
    const status = (await api.get(`/api/v1/scalesets/${w.scaleSetId}`)).body.status;
    expect(value(m, "edgerunner_scaleset_desired_runner_count", ss)).toBe(status.last_reconcile.summary.desired);
    expect(value(m, "edgerunner_scaleset_desired_runner_count", ss)).toBe(2);
    expect(value(m, "edgerunner_scaleset_enabled", ss)).toBe(1);
    expect(value(m, "edgerunner_scaleset_max_runners", ss)).toBe(10);
    expect(value(m, "edgerunner_scaleset_info", { ...ss, provider: w.provider, entity: "repository:octo/app" })).toBe(1);

    // Outbound calls by operation, with the failure counted.
    const creates = (await w.shim.requests()).filter((r) => r.method === "POST" && /\/v1\/instances$/.test(r.path)).length;
    expect(creates).toBeGreaterThanOrEqual(2);
    expect(value(m, "edgerunner_provider_operations_total", { provider: w.provider, operation: "create_instance" })).toBe(creates);
    expect(value(m, "edgerunner_provider_errors_total", { provider: w.provider, operation: "create_instance" })).toBe(2);
    const jit = (await w.github.requests()).filter((r) => r.path.endsWith("/generate-jitconfig")).length;
    expect(jit).toBeGreaterThanOrEqual(2);
    expect(value(m, "edgerunner_github_operations_total", { credentials: w.credentials, operation: "generate_jit_config" })).toBe(jit);
    expect(value(m, "edgerunner_github_errors_total", { credentials: w.credentials, operation: "generate_jit_config" })).toBeUndefined();

    // GitHub's rate-limit figures for the credentials, and their health.
    expect(value(m, "edgerunner_github_credentials_healthy", { credentials: w.credentials })).toBe(1);
    expect(find(m, "edgerunner_github_rate_limit_remaining", { credentials: w.credentials })[0]?.value).toBeGreaterThan(0);
    const reset = find(m, "edgerunner_github_rate_limit_reset_timestamp", { credentials: w.credentials })[0]?.value ?? 0;
    expect(reset * 1000).toBeGreaterThan(Date.now() - 3_600_000);

    // Reconcile duration: a proper histogram (cumulative buckets, +Inf = count).
    expect(m.types.get("edgerunner_reconcile_duration_seconds")).toBe("histogram");
    const buckets = find(m, "edgerunner_reconcile_duration_seconds_bucket", ss);
    const count = value(m, "edgerunner_reconcile_duration_seconds_count", ss)!;
    expect(count).toBe(1);
    expect(buckets.at(-1)).toMatchObject({ labels: { le: "+Inf" }, value: count });
    for (let i = 1; i < buckets.length; i++) expect(buckets[i]!.value).toBeGreaterThanOrEqual(buckets[i - 1]!.value);
    expect(value(m, "edgerunner_reconcile_duration_seconds_sum", ss)).toBeCloseTo(status.last_reconcile.durationMs / 1000, 3);

    // Queued → in_progress latency: job 1 took 7 s (bucket le=10, not le=5).
    expect(value(m, "edgerunner_job_queue_latency_seconds_count", ss)).toBe(1);
    expect(value(m, "edgerunner_job_queue_latency_seconds_sum", ss)).toBe(7);
    expect(value(m, "edgerunner_job_queue_latency_seconds_bucket", { ...ss, le: "5" })).toBe(0);
    expect(value(m, "edgerunner_job_queue_latency_seconds_bucket", { ...ss, le: "10" })).toBe(1);
    expect(value(m, "edgerunner_job_queue_latency_seconds_bucket", { ...ss, le: "+Inf" })).toBe(1);

    // Every metric has HELP and TYPE; no family is declared twice (the parser checks).
    for (const name of m.types.keys()) expect(m.help.get(name), name).toBeTruthy();

    // Logs: one JSON object per line, stable field names, never a secret or token.
    vi.restoreAllMocks();
    expect(lines.length).toBeGreaterThan(10);
    const events = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    for (const e of events) expect(typeof e.event).toBe("string");
    const names = new Set(events.map((e) => e.event));
    for (const n of [
      "webhook_accepted",
      "webhook_duplicate",
      "webhook_rejected",
      "plan",
      "instance_transition",
      "shim_call",
      "reconciled",
      "create_failed",
      "backoff_armed",
      "ui_login",
    ]) {
      expect(names, n).toContain(n);
    }
    for (const e of events.filter((e) => e.event === "shim_call"))
      expect(e).toMatchObject({ provider: w.provider, operation: expect.any(String), duration_ms: expect.any(Number) });
    // A GitHub call that succeeded is a debug line; at info only failures.
    const debugEvents = debugLines.map((l) => JSON.parse(l) as Record<string, unknown>);
    for (const e of events.filter((e) => e.event === "github_call")) expect(e).toHaveProperty("error");
    expect(debugEvents.filter((e) => e.event === "github_call").length).toBeGreaterThan(0);
    for (const e of debugEvents.filter((e) => e.event === "github_call"))
      expect(e).toMatchObject({ status: expect.any(Number), duration_ms: expect.any(Number) });
    for (const e of events.filter((e) => String(e.event).startsWith("webhook_"))) expect(e).toHaveProperty("delivery_id");
    expect(events.find((e) => e.event === "reconciled")).toMatchObject({ scale_set: w.scaleSetId, duration_ms: expect.any(Number) });
    expect(events.find((e) => e.event === "plan")).toMatchObject({ scale_set: w.scaleSetId, desired: 2 });
    expect(events.find((e) => e.event === "backoff_armed")).toMatchObject({
      scale_set: w.scaleSetId,
      kind: "create",
      failures: 2,
      delay_ms: expect.any(Number),
    });

    // The instance tokens the creates carried (the failed ones included).
    const instanceTokens = (await w.shim.requests())
      .filter((r) => r.operation === "create")
      .map((r) => (r.body as Record<string, string> | null)?.["instance-token"])
      .filter(Boolean) as string[];
    expect(instanceTokens.length).toBeGreaterThan(0);
    const secrets = [
      "ghp_test_token",
      WEBHOOK_SECRET,
      SHIM_SECRET,
      ADMIN_TOKEN,
      METRICS_TOKEN,
      env.INSTANCE_TOKEN_SECRET,
      env.ENCRYPTION_KEY,
      ...instanceTokens,
    ];
    const all = [...lines, ...debugLines].join("\n");
    for (const s of secrets) expect(all.includes(s), `a log line contains ${s.slice(0, 6)}…`).toBe(false);
    expect(all).not.toMatch(/v1\.\d+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{20,}/); // no session cookie
  });
});
