import { describe, expect, it } from "vitest";
import { measure, noCost } from "../../src/lib/invocation-cost";
import {
  COUNTERS_QUERY_CEILING,
  countReconcile,
  drainCounterStatements,
  flushCounters,
  MAX_COUNTERS_PER_FLUSH,
} from "../../src/observability/op-counters";
import { Exposition } from "../../src/observability/prometheus";

describe("Prometheus exposition", () => {
  it("writes HELP and TYPE once per family and escapes label values", () => {
    const text = new Exposition()
      .add("x_total", "a\\b\nc", "counter", { name: 'q"uo\\te\nline' }, 3)
      .add("x_total", "ignored second help", "counter", { name: "b" }, 4)
      .declare("empty", "no samples yet", "gauge")
      .render();
    expect(text).toBe(
      [
        "# HELP x_total a\\\\b\\nc",
        "# TYPE x_total counter",
        'x_total{name="q\\"uo\\\\te\\nline"} 3',
        'x_total{name="b"} 4',
        "# HELP empty no samples yet",
        "# TYPE empty gauge",
        "",
      ].join("\n"),
    );
  });

  it("renders histograms with +Inf equal to the count, and special values", () => {
    const text = new Exposition()
      .histogram(
        "h_seconds",
        "h",
        { a: "1" },
        [
          { le: 0.5, count: 1 },
          { le: 2, count: 3 },
        ],
        2.25,
        4,
      )
      .add("g", "g", "gauge", {}, Infinity)
      .render();
    expect(text).toContain(
      'h_seconds_bucket{a="1",le="0.5"} 1\nh_seconds_bucket{a="1",le="2"} 3\nh_seconds_bucket{a="1",le="+Inf"} 4\nh_seconds_sum{a="1"} 2.25\nh_seconds_count{a="1"} 4',
    );
    expect(text).toContain("g +Inf");
  });
});

describe("call counters", () => {
  it("puts a reconcile run into every bucket at or above its duration, and drains into one upsert per counter", () => {
    const bound: unknown[][] = [];
    const db = {
      prepare: () => ({
        bind: (...args: unknown[]) => {
          bound.push(args);
          return {};
        },
      }),
    } as unknown as D1Database;
    drainCounterStatements(db); // start empty
    bound.length = 0;
    countReconcile("ss-1", 700);
    countReconcile("ss-1", 30);
    const { statements, restore } = drainCounterStatements(db, 1);
    const values = Object.fromEntries(bound.map(([name, value]) => [name as string, value as number]));
    expect(statements).toHaveLength(bound.length);
    // Each run counts into the one bucket it falls in: three names per run, not one per bucket above it.
    expect(Object.keys(values).filter((n) => n.startsWith("reconcile.in|"))).toEqual(["reconcile.in|ss-1|1", "reconcile.in|ss-1|0.05"]);
    expect(values["reconcile.in|ss-1|1"]).toBe(1);
    expect(values["reconcile.in|ss-1|0.05"]).toBe(1);
    expect(values["reconcile.count|ss-1"]).toBe(2);
    expect(values["reconcile.duration_ms|ss-1"]).toBe(730);
    // A failed write hands the counts back.
    restore();
    bound.length = 0;
    drainCounterStatements(db);
    expect(bound.find(([n]) => n === "reconcile.count|ss-1")?.[1]).toBe(2);
  });

  it("writes at most a fifth of an invocation's D1 queries per flush, however many scale sets' runs are pending in the isolate", () => {
    const db = { prepare: () => ({ bind: () => ({}) }) } as unknown as D1Database;
    while (drainCounterStatements(db).statements.length); // start empty
    // Four hundred scale sets' runs: three counters each, over Cloudflare's 1,000 queries in one batch.
    for (let i = 0; i < 400; i++) countReconcile(`ss-${i}`, 10);
    const sizes: number[] = [];
    for (let n = drainCounterStatements(db).statements.length; n; n = drainCounterStatements(db).statements.length) sizes.push(n);
    expect(MAX_COUNTERS_PER_FLUSH).toBe(200);
    expect(sizes.every((n) => n <= MAX_COUNTERS_PER_FLUSH)).toBe(true);
    expect(sizes.reduce((a, b) => a + b, 0)).toBe(400 * 3);
  });

  it("never takes an invocation that already ran many D1 queries past its share for counters, and leaves the rest pending", async () => {
    const batches: number[] = [];
    const db = { prepare: () => ({ bind: () => ({}) }), batch: async (s: unknown[]) => batches.push(s.length) };
    while (drainCounterStatements(db as never).statements.length); // start empty
    for (let i = 0; i < 100; i++) countReconcile(`ss-${i}`, 10);
    const cost = { ...noCost(), d1Queries: COUNTERS_QUERY_CEILING - 50 };
    await measure(cost, () => flushCounters(db as never, [{}]));
    // 50 queries left under the ceiling: the extra statement and 49 counters.
    expect(batches).toEqual([50]);
    await measure({ ...noCost(), d1Queries: COUNTERS_QUERY_CEILING }, () => flushCounters(db as never));
    expect(batches).toEqual([50]);
    expect(drainCounterStatements(db as never).statements.length).toBe(MAX_COUNTERS_PER_FLUSH);
  });
});
