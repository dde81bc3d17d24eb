import { env, exports } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { applyStatusChanges } from "../../src/db/runner/instance-store";
import { DURATION_BUCKETS } from "../../src/observability/histograms";
import { flushCounters } from "../../src/observability/op-counters";
import { sampleSlot } from "../../src/scaleset/runner/runner-sample";
import { scaleSetObject } from "../../src/scaleset/stub";
import { clone, exampleFor } from "../fixtures/webhook-examples";
import { api, insertInstance } from "./helpers";
import { WEBHOOK_SECRET, world } from "./observed-world";
import { find, type Parsed, parsePrometheus, value } from "./prometheus-parse";
import { deliver, newDeliveryId } from "./webhook-setup";

// The histograms kept in D1 (queue time, run time, runner startup), from a scripted sequence of
// webhook deliveries with known timestamps and runner reports, against figures worked out by
// hand; and the runners-by-state sample a reconcile writes.

const GHES_HOST = { "x-github-enterprise-host": "github.example.test" };
let w: Awaited<ReturnType<typeof world>>;

beforeAll(async () => {
  w = await world();
});

async function metrics(): Promise<Parsed> {
  const res = await exports.default.fetch(
    new Request("https://edgerunner.test/metrics", { headers: { authorization: "Bearer test-metrics-token" } }),
  );
  expect(res.status).toBe(200);
  return parsePrometheus(await res.text());
}

type Action = "queued" | "in_progress" | "completed";
interface Times {
  created: number;
  started?: number;
  completed?: number;
}

let nextJob = 8_800_000;
function payload(action: Action, id: number, times: Times, opts: { runner?: string | null; labels?: string[] } = {}) {
  const p = clone(exampleFor(action, 289782451).payload) as any;
  p.repository.owner.login = "octo";
  p.repository.name = "app";
  p.repository.full_name = "octo/app";
  const j = p.workflow_job;
  j.id = id;
  j.labels = opts.labels ?? ["self-hosted", "linux"];
  j.created_at = new Date(times.created).toISOString();
  j.started_at = times.started === undefined ? j.created_at : new Date(times.started).toISOString();
  j.completed_at = times.completed === undefined ? null : new Date(times.completed).toISOString();
  j.runner_name = opts.runner === undefined ? (action === "queued" ? null : `runner-${id}`) : opts.runner;
  return p;
}

async function send(p: unknown, delivery = newDeliveryId()) {
  const res = await deliver(p, WEBHOOK_SECRET, { delivery, headers: GHES_HOST });
  expect(res.status, res.text).toBe(200);
  return res.body;
}

/** One histogram series of the scale set: every bucket by its `le`, the count and the sum. */
function series(m: Parsed, name: string, scaleSetId: string) {
  const labels = { scale_set_id: scaleSetId };
  const buckets = Object.fromEntries(find(m, `${name}_bucket`, labels).map((s) => [s.labels.le!, s.value]));
  return { buckets, count: value(m, `${name}_count`, labels), sum: value(m, `${name}_sum`, labels) };
}

/** Cumulative buckets from hand-placed observations (seconds). */
function expected(observations: number[]) {
  const buckets: Record<string, number> = {};
  for (const le of DURATION_BUCKETS) buckets[String(le)] = observations.filter((s) => s <= le).length;
  buckets["+Inf"] = observations.length;
  return { buckets, count: observations.length, sum: observations.reduce((a, b) => a + b, 0) };
}

describe("queue and run time histograms, from GitHub's timestamps", () => {
  it("count each job once, whatever the order and number of its deliveries", async () => {
    const t0 = Date.now() - 6 * 3_600_000;
    const [a, b, c, d, e] = [nextJob++, nextJob++, nextJob++, nextJob++, nextJob++];

    // A: queued, started 7 s later, ran 95 s; its start delivered twice (a redelivery), and again
    // under a new delivery id after it completed.
    const aTimes = { created: t0, started: t0 + 7_000, completed: t0 + 7_000 + 95_000 };
    await send(payload("queued", a, { created: t0 }));
    const started = newDeliveryId();
    await send(payload("in_progress", a, aTimes), started);
    expect(await send(payload("in_progress", a, aTimes), started)).toMatchObject({ duplicate: true });
    await send(payload("completed", a, aTimes));
    await send(payload("in_progress", a, aTimes));

    // B: its completion arrives first (waited 30 s, ran 3,700 s), then its start and its queueing.
    const bTimes = { created: t0, started: t0 + 30_000, completed: t0 + 30_000 + 3_700_000 };
    await send(payload("completed", b, bTimes));
    await send(payload("in_progress", b, bTimes));
    await send(payload("queued", b, { created: t0 }));

    // C: cancelled while queued (no runner ever took it): GitHub still fills started_at.
    await send(payload("queued", c, { created: t0 }));
    await send(payload("completed", c, { created: t0, started: t0 + 50_000, completed: t0 + 50_000 }, { runner: null }));

    // D: no scale set serves its labels.
    expect(await send(payload("in_progress", d, { created: t0, started: t0 + 3_000 }, { labels: ["gpu"] }))).toMatchObject({
      matched: false,
    });

    // E: waited more than the largest bucket (20,000 s), still running.
    await send(payload("queued", e, { created: t0 - 20_000_000 }));
    await send(payload("in_progress", e, { created: t0 - 20_000_000, started: t0 }));

    const m = await metrics();
    expect(m.types.get("edgerunner_job_queue_duration_seconds")).toBe("histogram");
    expect(m.types.get("edgerunner_job_run_duration_seconds")).toBe("histogram");
    expect(series(m, "edgerunner_job_queue_duration_seconds", w.scaleSetId)).toEqual(expected([7, 30, 20_000]));
    expect(series(m, "edgerunner_job_run_duration_seconds", w.scaleSetId)).toEqual(expected([95, 3_700]));
    expect(find(m, "edgerunner_job_queue_duration_seconds_count", { scale_set_id: w.scaleSetId })[0]!.labels.scale_set).toBe(
      w.scaleSetName,
    );
    // What D1 keeps once the isolate writes its counts (at most every 30 s; /metrics adds what it
    // has not written): each bucket's own count (not cumulative), the overflow bucket as -1.
    await flushCounters(env.DB);
    const rows = await env.DB.prepare(
      "SELECT bucket, count, sum FROM metric_histograms WHERE metric = 'edgerunner_job_queue_duration_seconds' AND scale_set_id = ? ORDER BY bucket",
    )
      .bind(w.scaleSetId)
      .all();
    expect(rows.results).toEqual([
      { bucket: -1, count: 1, sum: 20_000 },
      { bucket: 10, count: 1, sum: 7 },
      { bucket: 30, count: 1, sum: 30 },
    ]);
  });
});

describe("runner startup histogram", () => {
  it("counts the time from create to the first idle report, once per instance", async () => {
    const created = Date.now() - 1_000_000;
    const inst = await insertInstance(w.scaleSetId, { runner_status: "pending", created_at: created });
    const stub = scaleSetObject(env, w.scaleSetId);
    expect(await stub.runnerReport(w.scaleSetId, inst.name, 1, { status: "idle", message: "", agentId: null })).toEqual({ ok: true });
    const row = await env.DB.prepare("SELECT online_at FROM instances WHERE id = ?").bind(inst.id).first<{ online_at: number }>();
    expect(row!.online_at).toBeGreaterThanOrEqual(created + 1_000_000);
    // A later change saying the runner came online (as if it came back idle after a job) keeps the first time and counts nothing.
    const again = { id: inst.id, from: "running" as const, to: "running" as const, reason: "again", at: Date.now() };
    expect((await applyStatusChanges(env.DB, [{ ...again, set: { runnerStatus: "idle", onlineAt: again.at } }])).size).toBe(1);
    expect(
      (await env.DB.prepare("SELECT online_at FROM instances WHERE id = ?").bind(inst.id).first<{ online_at: number }>())!.online_at,
    ).toBe(row!.online_at);

    const s = series(await metrics(), "edgerunner_runner_startup_duration_seconds", w.scaleSetId);
    const startup = (row!.online_at - created) / 1000;
    expect(s.count).toBe(1);
    expect(s.sum).toBeCloseTo(startup, 3);
    // 1,000 s and a little: in the 1,200 s bucket.
    expect(s.buckets["600"]).toBe(0);
    expect(s.buckets["1200"]).toBe(1);
    expect(s.buckets["+Inf"]).toBe(1);
  });
});

describe("runners-by-state samples", () => {
  it("a reconcile writes the slot's sample once: the counts the planner saw and its min idle", async () => {
    await env.DB.prepare("DELETE FROM scale_set_samples").run();
    // An idle runner, a busy one and one still installing (none the planner acts on), instead of the startup test's.
    await env.DB.prepare("DELETE FROM instances WHERE scale_set_id = ?").bind(w.scaleSetId).run();
    await insertInstance(w.scaleSetId, { runner_status: "idle" });
    await insertInstance(w.scaleSetId, { runner_status: "active" });
    await insertInstance(w.scaleSetId, { runner_status: "installing" });
    expect((await api.put(`/api/v1/scalesets/${w.scaleSetId}`, { min_idle_runners: 1, enabled: false })).status).toBe(200);

    const first = sampleSlot(Date.now());
    for (let i = 0; i < 2; i++) expect((await api.post(`/api/v1/scalesets/${w.scaleSetId}/reconcile`)).status).toBe(200);
    const last = sampleSlot(Date.now());

    const rows = (await env.DB.prepare("SELECT * FROM scale_set_samples WHERE scale_set_id = ? ORDER BY at").bind(w.scaleSetId).all())
      .results;
    // One per slot the two runs fell in.
    expect(rows).toHaveLength(first === last ? 1 : 2);
    expect(rows[0]).toEqual({ scale_set_id: w.scaleSetId, at: first, idle: 1, busy: 1, booting: 1, other: 0, min_idle: 1 });
  });
});
