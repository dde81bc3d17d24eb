import { describe, expect, it } from "vitest";
import { afterBatch, nextTarget, type PruneTarget, runComplete, startRun } from "../../src/retention/batch-plan";
import { RETENTION_KNOBS, readRetentionSettings, retentionCutoffs } from "../../src/retention/settings";

const DAY = 86_400_000;

describe("retention settings", () => {
  it("defaults: 30 days of history, 14 of delivery ids, 365 of audit trail, 100 queries, 500 rows a batch", () => {
    expect(readRetentionSettings({})).toEqual({
      settings: { retentionDays: 30, deliveryRetentionDays: 14, auditRetentionDays: 365, maxQueries: 100, batchSize: 500 },
      warnings: [],
    });
    expect(readRetentionSettings({ RETENTION_DAYS: "", DELIVERY_RETENTION_DAYS: "  " }).warnings).toEqual([]);
  });

  it("reads whole numbers within bounds", () => {
    const { settings, warnings } = readRetentionSettings({
      RETENTION_DAYS: "90",
      DELIVERY_RETENTION_DAYS: " 7 ",
      AUDIT_RETENTION_DAYS: "180",
      RETENTION_MAX_QUERIES: "40",
      RETENTION_BATCH_SIZE: "1000",
    });
    expect(settings).toEqual({ retentionDays: 90, deliveryRetentionDays: 7, auditRetentionDays: 180, maxQueries: 40, batchSize: 1000 });
    expect(warnings).toEqual([]);
  });

  it("falls back to the default, with a warning, for anything but a positive whole number", () => {
    for (const bad of ["abc", "0", "-3", "1.5", "1e3", "30d"]) {
      const { settings, warnings } = readRetentionSettings({ RETENTION_DAYS: bad });
      expect(settings.retentionDays, bad).toBe(30);
      expect(warnings, bad).toEqual([{ name: "RETENTION_DAYS", value: bad, used: 30, reason: expect.stringContaining("default") }]);
    }
  });

  it("clamps values outside the bounds to the bound, with a warning; the query cap never reaches D1's 1,000", () => {
    const { settings, warnings } = readRetentionSettings({
      RETENTION_MAX_QUERIES: "5000",
      RETENTION_BATCH_SIZE: "1000000",
      RETENTION_DAYS: "99999",
    });
    expect(settings).toMatchObject({ maxQueries: 900, batchSize: 5000, retentionDays: 3650 });
    expect(warnings.map((w) => [w.name, w.used])).toEqual([
      ["RETENTION_DAYS", 3650],
      ["RETENTION_MAX_QUERIES", 900],
      ["RETENTION_BATCH_SIZE", 5000],
    ]);
    expect(readRetentionSettings({ RETENTION_MAX_QUERIES: "1" }).settings.maxQueries).toBe(3);
    expect(RETENTION_KNOBS.RETENTION_MAX_QUERIES.max).toBeLessThan(1000);
  });

  it("cutoffs are that many days before now", () => {
    const { settings } = readRetentionSettings({ RETENTION_DAYS: "30", DELIVERY_RETENTION_DAYS: "14", AUDIT_RETENTION_DAYS: "90" });
    expect(retentionCutoffs(100 * DAY, settings)).toEqual({ history: 70 * DAY, deliveries: 86 * DAY, audit: 10 * DAY, samples: 98 * DAY });
  });
});

const targets: PruneTarget[] = [
  { table: "deliveries", window: "deliveries", queries: 1 },
  { table: "jobs", window: "history", queries: 1 },
  { table: "transitions", window: "history", queries: 1 },
  { table: "instances", window: "history", after: "transitions", queries: 1 },
];

/** Plays a run against tables holding `rows` eligible rows each; returns the batches in order. */
function play(rows: Record<string, number>, maxQueries: number, batchSize: number, list: PruneTarget[] = targets) {
  const left = { ...rows };
  let p = startRun(list);
  const order: string[] = [];
  for (let t = nextTarget(list, p, { maxQueries }); t; t = nextTarget(list, p, { maxQueries })) {
    const n = Math.min(batchSize, left[t.table] ?? 0);
    left[t.table] = (left[t.table] ?? 0) - n;
    order.push(t.table);
    p = afterBatch(p, t, n, n < batchSize);
  }
  return { order, progress: p, left, complete: runComplete(list, p) };
}

describe("retention batch plan", () => {
  it("takes turns between tables, holds instances back until their transitions are done, and stops when all are done", () => {
    const r = play({ deliveries: 25, jobs: 5, transitions: 12, instances: 3 }, 100, 10);
    expect(r.order).toEqual(["deliveries", "jobs", "transitions", "deliveries", "transitions", "instances", "deliveries"]);
    expect(r.progress.deleted).toEqual({ deliveries: 25, jobs: 5, transitions: 12, instances: 3 });
    expect(r.complete).toBe(true);
    expect(r.progress.queries).toBe(7);
  });

  it("an empty database costs one query per table", () => {
    const r = play({}, 100, 10);
    expect(r.order).toEqual(["deliveries", "jobs", "transitions", "instances"]);
    expect(r.complete).toBe(true);
  });

  it("never spends more than the cap (one query kept for the run's figures), and the next run finishes the rest", () => {
    const rows = { deliveries: 95, jobs: 40, transitions: 30, instances: 8 };
    const first = play(rows, 10, 10);
    expect(first.progress.queries).toBe(9);
    expect(first.complete).toBe(false);
    const second = play(first.left, 100, 10);
    expect(second.complete).toBe(true);
    expect(Object.values(second.left).every((n) => n === 0)).toBe(true);
    for (const t of Object.keys(rows)) expect(first.progress.deleted[t]! + second.progress.deleted[t]!).toBe(rows[t as keyof typeof rows]);
  });

  it("the smallest cap (3) still leaves room for one batch of two queries", () => {
    expect(play({ deliveries: 100, jobs: 100 }, 3, 10).order).toEqual(["deliveries", "jobs"]);
    expect(play({ deliveries: 100 }, 3, 10, [{ table: "deliveries", window: "deliveries", queries: 2 }]).order).toEqual(["deliveries"]);
    expect(readRetentionSettings({ RETENTION_MAX_QUERIES: "2" }).settings.maxQueries).toBe(3);
  });

  it("counts what each batch costs: a batch that keeps totals first is two queries", () => {
    const costly: PruneTarget[] = [
      { table: "deliveries", window: "deliveries", queries: 2 },
      { table: "transitions", window: "history", queries: 1 },
    ];
    const r = play({ deliveries: 100, transitions: 100 }, 10, 10, costly);
    // 2 + 1 + 2 + 1 + 2 = 8; one more delivery batch would make 10 with the figures' write: too many.
    expect(r.order).toEqual(["deliveries", "transitions", "deliveries", "transitions", "deliveries", "transitions"]);
    expect(r.progress.queries).toBe(9);
    expect(r.complete).toBe(false);
  });

  it("a full batch means more may be left: the table gets another turn", () => {
    const r = play({ jobs: 10 }, 100, 10);
    expect(r.order.filter((t) => t === "jobs")).toEqual(["jobs", "jobs"]);
  });
});
