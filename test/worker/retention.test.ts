import { createScheduledController } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { countingD1 } from "../../src/db/counting-d1";
import worker from "../../src/index";
import { insertInstance, seed } from "./helpers";
import { find, type Parsed, parsePrometheus, value } from "./prometheus-parse";

const DAY = 86_400_000;
const NOW = Date.now();
const ago = (days: number) => NOW - days * DAY;

let scaleSetId: string;

beforeAll(async () => {
  const repo = await seed.repository();
  scaleSetId = (await seed.scaleSet(`repositories/${repo.id}`)).id;
});

beforeEach(async () => {
  await env.DB.batch(
    [
      "webhook_deliveries",
      "jobs",
      "instances",
      "retention_last_run",
      "counters",
      "audit_log",
      "scale_set_samples",
      "metric_histograms",
      "delivery_recoveries",
      "retention_cursors",
    ].map((t) => env.DB.prepare(`DELETE FROM ${t}`)),
  );
});

afterEach(() => vi.restoreAllMocks());

/** Captures the JSON log lines of everything run while it is on. */
function captureLogs() {
  const lines: { level: string; event: Record<string, any> }[] = [];
  for (const level of ["log", "warn", "error", "debug"] as const) {
    vi.spyOn(console, level).mockImplementation((text: unknown) => void lines.push({ level, event: JSON.parse(String(text)) }));
  }
  return lines;
}

/**
 * Runs the Worker's own `scheduled` handler, as the Cron Trigger would; returns the D1 queries it
 * spent, each statement of a batch counted, as D1's per-invocation limit counts them.
 */
async function cron(vars: Record<string, string> = {}, at = NOW): Promise<number> {
  const trips = { n: 0 };
  let moreInBatches = 0;
  const counted = countingD1(env.DB, trips);
  const db = new Proxy(counted, {
    get(target, prop, receiver) {
      if (prop === "batch") {
        return (statements: D1PreparedStatement[]) => {
          // The usage tally the run writes after it (src/lib/usage-tally.ts) is not retention's work.
          if (statements.some((st) => String((st as { statement?: string }).statement ?? "").includes("usage_days"))) {
            return env.DB.batch(statements);
          }
          moreInBatches += statements.length - 1;
          return target.batch(statements);
        };
      }
      return Reflect.get(target, prop, receiver);
    },
  });
  // The worker project keeps RETENTION_DAYS at ten years for GitHub's old example payloads; these
  // tests run retention as deployed, at its default, unless they say otherwise.
  const { RETENTION_DAYS: _tenYears, ...deployed } = env;
  await worker.scheduled(createScheduledController({ scheduledTime: at, cron: "17 * * * *" }), { ...deployed, ...vars, DB: db });
  return trips.n + moreInBatches;
}

async function scrape() {
  const res = await exports.default.fetch(
    new Request("https://edgerunner.test/metrics", { headers: { authorization: "Bearer test-metrics-token" } }),
  );
  expect(res.status).toBe(200);
  return parsePrometheus(await res.text());
}

async function deliveries(ats: number[]) {
  const rows = ats.map((at, i) => ({ id: `d-${at}-${i}-${Math.random()}`, at }));
  await env.DB.prepare(
    `INSERT INTO webhook_deliveries (delivery_id, event, action, received_at, outcome)
     SELECT json_extract(value, '$.id'), 'workflow_job', 'queued', json_extract(value, '$.at'), 'routed' FROM json_each(?)`,
  )
    .bind(JSON.stringify(rows))
    .run();
  return rows.map((r) => r.id);
}

let jobSeq = 9_000_000;
/** Jobs routed to the file's scale set, or unmatched (`routed: false`). */
async function jobs(n: number, status: string, updatedAt: number, runnerName: string | null = null, routed = true): Promise<number[]> {
  const ids = Array.from({ length: n }, () => jobSeq++);
  await env.DB.prepare(
    `INSERT INTO jobs (id, run_id, repository, owner, labels, status, runner_name, scale_set_id, created_at, updated_at)
     SELECT value, 1, 'app', 'octo', '[]', ?, ?, ?, ?, ? FROM json_each(?)`,
  )
    .bind(status, runnerName, routed ? scaleSetId : null, updatedAt, updatedAt, JSON.stringify(ids))
    .run();
  return ids;
}

const seqOf = async (id: number) => (await env.DB.prepare("SELECT seq FROM jobs WHERE id = ?").bind(id).first<number>("seq"))!;

async function instance(status: string, changedAt: number, transitions: number, over: Record<string, unknown> = {}) {
  const row = await insertInstance(scaleSetId, {
    status,
    status_changed_at: changedAt,
    created_at: changedAt,
    updated_at: changedAt,
    transitions: JSON.stringify(
      Array.from({ length: transitions }, () => ({ at: changedAt, field: "status", from: null, to: "x", reason: "test" })),
    ),
    ...over,
  });
  return row;
}

const historyLength = async (id: string) =>
  (await env.DB.prepare("SELECT json_array_length(transitions) AS n FROM instances WHERE id = ?").bind(id).first<{ n: number }>())!.n;

async function count(sql: string, ...binds: unknown[]): Promise<number> {
  return (await env.DB.prepare(`SELECT COUNT(*) AS n FROM ${sql}`)
    .bind(...binds)
    .first<{ n: number }>())!.n;
}

describe("retention (the Cron Trigger)", () => {
  it("deletes old delivery ids, old completed jobs and old deleted instances with their transitions, and nothing live", async () => {
    const [oldDelivery, recentDelivery] = await deliveries([ago(15), ago(13)]);

    const [oldCompleted] = await jobs(1, "completed", ago(31));
    const [recentCompleted] = await jobs(1, "completed", ago(29));
    const [oldQueued] = await jobs(1, "queued", ago(60));
    const [oldWaiting] = await jobs(1, "waiting", ago(60));
    const [oldInProgress] = await jobs(1, "in_progress", ago(60));
    // Queued unmatched through the whole window: GitHub cancelled it long ago. One held for
    // approval stays (a run may wait 35 days).
    const [oldUnmatched] = await jobs(1, "queued", ago(31), null, false);
    const [oldUnmatchedWaiting] = await jobs(1, "waiting", ago(31), null, false);
    const [recentUnmatched] = await jobs(1, "queued", ago(29), null, false);

    const running = await instance("running", ago(90), 4);
    // A completed job still linked to a live instance (its job_id, or its runner name).
    const [linkedById] = await jobs(1, "completed", ago(60));
    const busy = await instance("pending_delete", ago(90), 2, { job_id: linkedById, job_seq: await seqOf(linkedById!) });
    const [linkedByName] = await jobs(1, "completed", ago(60), running.name);

    const oldDeleted = await instance("deleted", ago(31), 3);
    const recentDeleted = await instance("deleted", ago(29), 3);
    // A deleted instance an unfinished job still names: kept until the job finishes.
    const [unfinished] = await jobs(1, "in_progress", ago(40));
    const deletedServing = await instance("deleted", ago(40), 2, { job_id: unfinished, job_seq: await seqOf(unfinished!) });
    const deletedNamed = await instance("deleted", ago(40), 1);
    await jobs(1, "queued", ago(40), deletedNamed.name);
    // Audit trail entries: kept AUDIT_RETENTION_DAYS (365), however old the things they name.
    const audit = env.DB.prepare(
      "INSERT INTO audit_log (at, actor, via, method, route, path, status, request_id) VALUES (?, 'admin_token', 'api', 'PUT', '/r', ?, 200, 'rid')",
    );
    await env.DB.batch([audit.bind(ago(366), "/old"), audit.bind(ago(364), "/recent")]);
    // Runners-by-state samples: kept 48 hours. Histogram rows: kept while their scale set exists.
    const sample = env.DB.prepare("INSERT INTO scale_set_samples (scale_set_id, at, idle) VALUES (?, ?, 1)");
    const HOUR = 3_600_000;
    await env.DB.batch([sample.bind(scaleSetId, NOW - 49 * HOUR), sample.bind(scaleSetId, NOW - 47 * HOUR)]);
    const histogram = env.DB.prepare(
      "INSERT INTO metric_histograms (metric, scale_set_id, bucket, count, sum) VALUES ('edgerunner_job_queue_duration_seconds', ?, 10, 1, 7)",
    );
    await env.DB.batch([histogram.bind(scaleSetId), histogram.bind("a-deleted-scale-set")]);
    // Delivery recovery's record of failed deliveries: kept as long as the delivery ids (14 days).
    const recovery = env.DB.prepare(
      "INSERT INTO delivery_recoveries (key, watch_key, means, seen_at, outcome, updated_at) VALUES (?, 'hook:x', 'ingest', ?, 'recovered', ?)",
    );
    await env.DB.batch([recovery.bind("old-guid", ago(15), ago(15)), recovery.bind("recent-guid", ago(13), ago(13))]);

    const logs = captureLogs();
    const queries = await cron();
    vi.restoreAllMocks();

    const deliveryIds = (await env.DB.prepare("SELECT delivery_id FROM webhook_deliveries").all<{ delivery_id: string }>()).results.map(
      (r) => r.delivery_id,
    );
    expect(deliveryIds).toEqual([recentDelivery]);
    expect(deliveryIds).not.toContain(oldDelivery);

    const jobIds = (await env.DB.prepare("SELECT id FROM jobs ORDER BY id").all<{ id: number }>()).results.map((r) => r.id);
    for (const id of [oldCompleted, oldUnmatched]) expect(jobIds).not.toContain(id);
    for (const id of [
      recentCompleted,
      oldQueued,
      oldWaiting,
      oldInProgress,
      linkedById,
      linkedByName,
      unfinished,
      recentUnmatched,
      oldUnmatchedWaiting,
    ])
      expect(jobIds).toContain(id);

    const instanceIds = (await env.DB.prepare("SELECT id FROM instances").all<{ id: string }>()).results.map((r) => r.id);
    expect(instanceIds.sort()).toEqual([running.id, busy.id, recentDeleted.id, deletedServing.id, deletedNamed.id].sort());
    expect(instanceIds).not.toContain(oldDeleted.id);
    expect(await historyLength(running.id)).toBe(4);
    expect(await historyLength(busy.id)).toBe(2);
    expect(await historyLength(recentDeleted.id)).toBe(3);
    expect(await historyLength(deletedServing.id)).toBe(2);
    expect(await historyLength(deletedNamed.id)).toBe(1);
    expect((await env.DB.prepare("SELECT path FROM audit_log").all()).results).toEqual([{ path: "/recent" }]);
    expect((await env.DB.prepare("SELECT at FROM scale_set_samples").all()).results).toEqual([{ at: NOW - 47 * HOUR }]);
    expect((await env.DB.prepare("SELECT scale_set_id FROM metric_histograms").all()).results).toEqual([{ scale_set_id: scaleSetId }]);
    expect((await env.DB.prepare("SELECT key FROM delivery_recoveries").all()).results).toEqual([{ key: "recent-guid" }]);

    // One event, with the counts; nothing failed, nothing was left.
    const events = logs.filter((l) => l.event.event === "retention_pruned");
    expect(events).toHaveLength(1);
    expect(events[0]!.level).toBe("log");
    expect(events[0]!.event).toMatchObject({
      deleted: {
        webhook_deliveries: 1,
        jobs: 2,
        instances: 1,
        audit_log: 1,
        scale_set_samples: 1,
        metric_histograms: 1,
        delivery_recoveries: 1,
      },
      deleted_total: 8,
      complete: true,
      queries,
      duration_ms: expect.any(Number),
    });
    expect(events[0]!.event).not.toHaveProperty("error");
    expect(logs.filter((l) => l.level !== "log")).toEqual([]);

    // Stored for /metrics: one batch per table (each came back short; jobs keep their totals first,
    // two statements; the deliveries' walk reads its window, then keeps their totals, deletes and
    // moves its cursor, four) plus the write of the figures.
    expect(queries).toBe(12);
    const last = await env.DB.prepare("SELECT * FROM retention_last_run").all();
    expect(last.results).toEqual([
      expect.objectContaining({ id: 1, started_at: NOW, queries: 12, complete: 1, error: null, deleted: expect.any(String) }),
    ]);
  });

  it("is idempotent: a second run finds nothing and changes nothing", async () => {
    await deliveries([ago(20), ago(1)]);
    await jobs(2, "completed", ago(40));
    await instance("deleted", ago(40), 2);
    await cron();
    const before = await Promise.all(["webhook_deliveries", "jobs", "instances"].map((t) => count(t)));
    // The newest job row stays whatever its age (see "keeps the newest job").
    expect(before).toEqual([1, 1, 0]);
    const logs = captureLogs();
    await cron();
    vi.restoreAllMocks();
    expect(await Promise.all(["webhook_deliveries", "jobs", "instances"].map((t) => count(t)))).toEqual(before);
    expect(logs.find((l) => l.event.event === "retention_pruned")!.event).toMatchObject({ deleted_total: 0, complete: true });
  });

  it("never spends more queries than RETENTION_MAX_QUERIES; the next run finishes the job", async () => {
    // 90 old deliveries, walked by key in batches of 25 (4 batches of 4 queries: the window's read,
    // then the totals, the DELETE and the cursor), 30 jobs (2 batches, 2 queries each), 10
    // instances with their 30 transitions (1), and one each for the audit trail, the samples, the
    // histograms and delivery recovery's record: 25 queries, and one per run for its figures.
    await deliveries(Array.from({ length: 90 }, (_, i) => ago(20) - i * 1000));
    await jobs(30, "completed", ago(40));
    for (let i = 0; i < 10; i++) await instance("deleted", ago(40 + i), 3);
    const keep = await deliveries([ago(1)]);
    const vars = { RETENTION_MAX_QUERIES: "14", RETENTION_BATCH_SIZE: "25" };

    const logs = captureLogs();
    const first = await cron(vars);
    expect(first).toBe(14);
    const firstEvent = logs.find((l) => l.event.event === "retention_pruned")!.event;
    expect(firstEvent).toMatchObject({ complete: false, queries: 14 });
    expect(firstEvent.deleted.webhook_deliveries).toBe(25);
    expect(firstEvent.deleted_total).toBeLessThanOrEqual(13 * 25);
    // By key: what is left of the old deliveries is after the walk's cursor, where the next run goes on.
    const cursor = await env.DB.prepare("SELECT position FROM retention_cursors WHERE name = 'webhook_deliveries'").first<{
      position: string;
    }>();
    const left = (
      await env.DB.prepare("SELECT delivery_id FROM webhook_deliveries WHERE received_at < ? ORDER BY delivery_id")
        .bind(ago(14))
        .all<{ delivery_id: string }>()
    ).results.map((r) => r.delivery_id);
    expect(left).toHaveLength(65);
    expect(left.every((key) => key > cursor!.position)).toBe(true);

    // The runs after it go on from there, each within the cap, until one finds nothing left.
    const events = [firstEvent];
    while (!events.at(-1)!.complete && events.length < 5) {
      logs.length = 0;
      expect(await cron(vars)).toBeLessThanOrEqual(14);
      events.push(logs.find((l) => l.event.event === "retention_pruned")!.event);
    }
    vi.restoreAllMocks();
    // A batch of deliveries a run: the other tables take their turns in between.
    expect(events.map((e) => e.complete)).toEqual([false, false, false, true]);
    const total = (t: string) => events.reduce((sum, e) => sum + e.deleted[t], 0);
    // All but the newest job, which stays.
    expect([total("webhook_deliveries"), total("jobs"), total("instances")]).toEqual([90, 29, 10]);
    expect((await env.DB.prepare("SELECT delivery_id FROM webhook_deliveries").all()).results).toEqual([{ delivery_id: keep[0] }]);
    expect(await Promise.all(["jobs", "instances"].map((t) => count(t)))).toEqual([1, 0]);
  });

  it("walks the delivery ids at most once a day: a finished lap rests until a day after it started", async () => {
    const [first] = await deliveries([ago(20)]);
    await cron();
    expect(await count("webhook_deliveries WHERE delivery_id = ?", first)).toBe(0);
    expect(await env.DB.prepare("SELECT position, lap_started_at FROM retention_cursors").all()).toMatchObject({
      results: [{ position: "", lap_started_at: NOW }],
    });

    // Another old one: the hourly runs of the day leave it, and read none of the table's keys.
    const [second] = await deliveries([ago(20)]);
    const logs = captureLogs();
    const queries = await cron({}, NOW + 23 * 3_600_000);
    vi.restoreAllMocks();
    expect(await count("webhook_deliveries WHERE delivery_id = ?", second)).toBe(1);
    expect(logs.find((l) => l.event.event === "retention_pruned")!.event).toMatchObject({
      deleted: { webhook_deliveries: 0 },
      complete: true,
    });
    // The walk's one read, a batch for each other table (the jobs' two statements), the figures.
    expect(queries).toBe(9);

    // A day after the lap started, the next one takes it.
    await cron({}, NOW + 24 * 3_600_000);
    expect(await count("webhook_deliveries WHERE delivery_id = ?", second)).toBe(0);
    expect(await env.DB.prepare("SELECT lap_started_at FROM retention_cursors").first("lap_started_at")).toBe(NOW + 24 * 3_600_000);
  });

  it("honours RETENTION_DAYS and DELIVERY_RETENTION_DAYS", async () => {
    await deliveries([ago(4), ago(2)]);
    const [j10] = await jobs(1, "completed", ago(10));
    const [j5] = await jobs(1, "completed", ago(5));
    await cron({ RETENTION_DAYS: "7", DELIVERY_RETENTION_DAYS: "3" });
    expect(await count("webhook_deliveries")).toBe(1);
    const left = (await env.DB.prepare("SELECT id FROM jobs").all<{ id: number }>()).results.map((r) => r.id);
    expect(left).toEqual([j5]);
    expect(left).not.toContain(j10);
  });

  it("bad values: a warning naming the setting, the default used, no crash", async () => {
    const [j40] = await jobs(1, "completed", ago(40));
    const [j20] = await jobs(1, "completed", ago(20));
    for (const bad of ["abc", "0"]) {
      const logs = captureLogs();
      await cron({ RETENTION_DAYS: bad, RETENTION_MAX_QUERIES: "-1" });
      vi.restoreAllMocks();
      const warnings = logs.filter((l) => l.level === "warn").map((l) => l.event);
      expect(warnings).toEqual([
        expect.objectContaining({ event: "retention_setting_invalid", setting: "RETENTION_DAYS", value: bad, used: 30 }),
        expect.objectContaining({ event: "retention_setting_invalid", setting: "RETENTION_MAX_QUERIES", value: "-1", used: 100 }),
      ]);
      expect(logs.find((l) => l.event.event === "retention_pruned")?.level).toBe("log");
    }
    const left = (await env.DB.prepare("SELECT id FROM jobs").all<{ id: number }>()).results.map((r) => r.id);
    expect(left).toEqual([j20]);
    expect(left).not.toContain(j40);
  });
});

describe("retention when D1 fails", () => {
  it("keeps the newest job, whatever its age: a new row's seq must not be one an instance still names", async () => {
    const [older, newest] = await jobs(2, "completed", ago(40));
    await cron();
    expect(await count("jobs WHERE id = ?", older)).toBe(0);
    const kept = await env.DB.prepare("SELECT seq FROM jobs WHERE id = ?").bind(newest).first<{ seq: number }>();
    expect(kept).not.toBeNull();
    await jobs(1, "queued", ago(1));
    expect(await env.DB.prepare("SELECT max(seq) AS s FROM jobs").first<{ s: number }>()).toEqual({ s: kept!.seq + 1 });
  });

  it("stops at the failing statement, logs the error, keeps what it did and the next run goes on", async () => {
    await deliveries([ago(20)]);
    // Two: the newest job row always stays.
    const [old] = await jobs(2, "completed", ago(40));
    // A database whose job DELETE fails (as a D1 timeout or overload would): the batch is one
    // transaction, so the totals kept for the jobs roll back with it.
    const failing = new Proxy(env.DB, {
      get(target, prop) {
        if (prop === "prepare") {
          return (sql: string) => {
            return target.prepare(sql.startsWith("DELETE FROM jobs") ? "DELETE FROM no_such_table WHERE ?1 < ?2" : sql);
          };
        }
        const v = Reflect.get(target, prop);
        return typeof v === "function" ? v.bind(target) : v;
      },
    });
    const logs = captureLogs();
    await worker.scheduled(createScheduledController({ scheduledTime: NOW }), { ...env, DB: failing });
    vi.restoreAllMocks();
    const event = logs.find((l) => l.event.event === "retention_pruned")!;
    expect(event.level).toBe("error");
    expect(event.event).toMatchObject({
      deleted: { webhook_deliveries: 1, jobs: 0 },
      complete: false,
      error: expect.stringMatching(/^jobs: .*no such table/),
    });
    expect(await env.DB.prepare("SELECT complete, error FROM retention_last_run").first()).toEqual({
      complete: 0,
      error: expect.stringContaining("no such table"),
    });
    expect(await count("webhook_deliveries")).toBe(0);
    const m = await scrape();
    expect(value(m, "edgerunner_retention_last_run_failed")).toBe(1);
    expect(value(m, "edgerunner_retention_last_run_deleted_rows", { table: "webhook_deliveries" })).toBe(1);

    await cron();
    expect(value(await scrape(), "edgerunner_retention_last_run_failed")).toBe(0);
    expect(await count("jobs WHERE id = ?", old)).toBe(0);
    expect(await env.DB.prepare("SELECT complete, error FROM retention_last_run").first()).toEqual({ complete: 1, error: null });
  });
});

describe("retention in /metrics", () => {
  it("keeps counters counting: webhooks_total and the queue latency histogram never go down when rows are pruned", async () => {
    await deliveries([ago(20), ago(20), ago(1)]);
    await env.DB.prepare("UPDATE webhook_deliveries SET outcome = 'unmatched' WHERE received_at = ?").bind(ago(1)).run();
    // Three started jobs of the scale set (2 s, 7 s and 90 s from queued to started), two of them old enough to go.
    const started = async (updatedAt: number, latencyS: number) => {
      const [id] = await jobs(1, "completed", updatedAt);
      await env.DB.prepare("UPDATE jobs SET scale_set_id = ?, queued_at = ?, started_at = ? WHERE id = ?")
        .bind(scaleSetId, 1_000_000, 1_000_000 + latencyS * 1000, id)
        .run();
    };
    await started(ago(40), 2);
    await started(ago(40), 90);
    await started(ago(1), 7);

    const ss = { scale_set_id: scaleSetId };
    const series = (m: Parsed) => ({
      routed: value(m, "edgerunner_webhooks_total", { outcome: "routed", reason: "" }),
      unmatched: value(m, "edgerunner_webhooks_total", { outcome: "unmatched", reason: "" }),
      count: value(m, "edgerunner_job_queue_latency_seconds_count", ss),
      sum: value(m, "edgerunner_job_queue_latency_seconds_sum", ss),
      le5: value(m, "edgerunner_job_queue_latency_seconds_bucket", { ...ss, le: "5" }),
      le10: value(m, "edgerunner_job_queue_latency_seconds_bucket", { ...ss, le: "10" }),
      le120: value(m, "edgerunner_job_queue_latency_seconds_bucket", { ...ss, le: "120" }),
      inf: value(m, "edgerunner_job_queue_latency_seconds_bucket", { ...ss, le: "+Inf" }),
    });
    const before = series(await scrape());
    expect(before).toEqual({ routed: 2, unmatched: 1, count: 3, sum: 99, le5: 1, le10: 2, le120: 3, inf: 3 });

    await cron();
    expect(await count("webhook_deliveries")).toBe(1);
    expect(await count("jobs")).toBe(1);
    expect(series(await scrape())).toEqual(before);

    // New rows add to the totals as before; a second prune keeps them.
    await deliveries([ago(1)]);
    await started(ago(1), 1);
    const more = series(await scrape());
    expect(more).toEqual({ ...before, routed: 3, count: 4, sum: 100, le5: 2, le10: 3, le120: 4, inf: 4 });
    await cron();
    expect(series(await scrape())).toEqual(more);
  });

  it("shows rows per table, the database size and the last run's figures, from D1", async () => {
    const none = await scrape();
    expect(find(none, "edgerunner_retention_last_run_deleted_rows", {})).toEqual([]);
    expect(value(none, "edgerunner_retention_last_run_timestamp_seconds", {})).toBeUndefined();

    await deliveries([ago(20), ago(20), ago(1)]);
    await jobs(2, "completed", ago(40));
    await jobs(1, "queued", ago(1));
    await instance("deleted", ago(40), 3);
    await instance("running", ago(1), 2);
    // The deliveries' walk (4 queries) and one batch of jobs (2), and the figures.
    await cron({ RETENTION_MAX_QUERIES: "7", RETENTION_BATCH_SIZE: "1" });

    const m = await scrape();
    expect(value(m, "edgerunner_retention_last_run_timestamp_seconds", {})).toBe(Math.floor(NOW / 1000));
    expect(value(m, "edgerunner_retention_last_run_duration_seconds", {})).toBeGreaterThanOrEqual(0);
    expect(value(m, "edgerunner_retention_last_run_deleted_rows", { table: "webhook_deliveries" })).toBe(1);
    expect(value(m, "edgerunner_retention_last_run_deleted_rows", { table: "jobs" })).toBe(1);
    expect(value(m, "edgerunner_retention_last_run_deleted_rows", { table: "instances" })).toBe(0);
    expect(value(m, "edgerunner_retention_last_run_complete", {})).toBe(0);
    expect(value(m, "edgerunner_retention_last_run_failed", {})).toBe(0);

    for (const table of ["webhook_deliveries", "jobs", "instances", "scale_sets", "entities", "counters", "retention_last_run"]) {
      expect(value(m, "edgerunner_table_rows", { table }), table).toBe(await count(table));
    }
    expect(value(m, "edgerunner_table_rows", { table: "webhook_deliveries" })).toBe(2);
    expect(value(m, "edgerunner_table_rows", { table: "jobs" })).toBe(2);
    expect(value(m, "edgerunner_database_size_bytes", {})).toBeGreaterThan(4096);

    await cron();
    const after = await scrape();
    expect(value(after, "edgerunner_retention_last_run_complete", {})).toBe(1);
    expect(value(after, "edgerunner_retention_last_run_deleted_rows", { table: "instances" })).toBe(1);
    expect(value(after, "edgerunner_table_rows", { table: "instances" })).toBe(1);
  });
});
