import { describe, expect, it } from "vitest";
import { runCli } from "./run-cli";

const units = (u: Partial<Record<string, number>>) => ({
  worker_requests: 0,
  worker_cpu_ms: 0,
  do_requests: 0,
  do_gb_s: 0,
  d1_rows_read: 0,
  d1_rows_written: 0,
  do_rows_read: 0,
  do_rows_written: 0,
  ...u,
});

const month = units({
  worker_requests: 41_234,
  do_requests: 152_300,
  do_gb_s: 8123.456,
  d1_rows_read: 1_234_567,
  d1_rows_written: 312_000,
  do_rows_read: 450_000,
  do_rows_written: 98_000,
});
const today = units({
  worker_requests: 6100,
  do_requests: 23_000,
  do_gb_s: 1250.04,
  d1_rows_read: 190_000,
  d1_rows_written: 85_000,
  do_rows_read: 70_000,
  do_rows_written: 15_000,
});
const LIMITS: Record<string, number> = {
  worker_requests: 100_000,
  do_requests: 100_000,
  do_gb_s: 13_000,
  d1_rows_read: 5_000_000,
  d1_rows_written: 100_000,
  do_rows_read: 5_000_000,
  do_rows_written: 100_000,
};
const shareOf = (u: Record<string, number>, days = 1) =>
  Object.fromEntries(Object.entries(LIMITS).map(([k, limit]) => [k, u[k]! / days / limit]));

/** A week into December, as GET /api/v1/usage answers it: today's D1 rows written near the Free plan's limit. */
const sample = {
  month: "2026-12",
  from: "2026-12-01",
  to: "2026-12-07",
  days_elapsed: 6.5,
  units: month,
  today,
  by_kind: [
    { kind: "alarm", units: units({ d1_rows_written: 12_000, d1_rows_read: 34_567, do_requests: 150_000 }), subrequests: 9000 },
    { kind: "bootstrap", units: units({ d1_rows_written: 40_000, d1_rows_read: 100_000, worker_requests: 4000 }), subrequests: 8000 },
    { kind: "reconcile", units: units({ d1_rows_written: 150_000, d1_rows_read: 600_000 }), subrequests: 20_000 },
    { kind: "retention", units: units({ d1_rows_written: 20_000, d1_rows_read: 200_000 }), subrequests: 10 },
    { kind: "webhook", units: units({ d1_rows_written: 90_000, d1_rows_read: 300_000, worker_requests: 37_234 }), subrequests: 40_000 },
  ],
  by_day: [{ day: "2026-12-07", units: today }],
  free_plan: {
    averageDay: Object.fromEntries(Object.entries(month).map(([k, v]) => [k, v / 6.5])),
    share: shareOf(month, 6.5),
    near: [],
    exceeded: [],
    today_share: shareOf(today),
    today_near: ["d1_rows_written"],
  },
  paid_plan: { totalUsd: 5, baseUsd: 5, overageUsd: Object.fromEntries(Object.keys(month).map((k) => [k, 0])) },
  cpu_counted: false,
  prices: { checked: "2026-12-07", sources: { workersPricing: "https://developers.cloudflare.com/workers/platform/pricing/" } },
  largest_invocations: [
    { kind: "webhook", invocations: 5000, subrequests: 12, d1_queries: 9 },
    { kind: "reconcile", invocations: 800, subrequests: 31, d1_queries: 44 },
    { kind: "alarm", invocations: 20_000, subrequests: 40, d1_queries: 20 },
  ],
};

const text = (lines: string[]) => lines.map((l) => `${l}\n`).join("");

describe("edgerunner usage", () => {
  it("prints the month's units against the Free plan, the Workers Paid bill, what wrote the most and the largest invocation", async () => {
    const r = await runCli(["usage"], { body: sample });
    expect(r.code).toBe(0);
    expect(r.stderr).toBe("");
    expect(r.requests).toHaveLength(1);
    const url = new URL(r.requests[0]!.url);
    expect(url.pathname).toBe("/api/v1/usage");
    expect(url.search).toBe("");
    expect(r.stdout).toBe(
      text([
        "Cloudflare usage, 2026-12-01 to 2026-12-07 (UTC), as the coordinator counted it",
        "",
        "UNIT                            THIS MONTH  TODAY    FREE PLAN DAILY LIMIT  TODAY'S SHARE",
        "Worker requests                 41,234      6,100    100,000                6 %",
        "Durable Object requests         152,300     23,000   100,000                23 %",
        "Durable Object duration (GB-s)  8,123.5     1,250.0  13,000                 9 %",
        "D1 rows read                    1,234,567   190,000  5,000,000              3 %",
        "D1 rows written                 312,000     85,000   100,000                85 %",
        "DO storage rows read            450,000     70,000   5,000,000              1 %",
        "DO storage rows written         98,000      15,000   100,000                15 %",
        "Worker CPU (ms)                 not counted (see docs/performance.md#what-it-costs)",
        "",
        "Workers Paid this month: $5.00 ($5.00 base + $0.00 beyond the included amounts)",
        "Free plan: near the daily limit today: D1 rows written (85,000 of 100,000, 85 %)",
        "",
        "What spent the most D1 rows written:",
        "  reconcile: 150,000 written (48 % of the month's), 600,000 read",
        "  webhook:   90,000 written (28 % of the month's), 300,000 read",
        "  bootstrap: 40,000 written (12 % of the month's), 100,000 read",
        "",
        "Largest invocation (this isolate): 31 subrequests, 44 D1 queries (reconcile) (the Free plan allows 50 and 50)",
      ]),
    );
  });

  it("says the Free plan's daily limits hold when nothing nears one, and prices the overage", async () => {
    const calm = units({ ...today, d1_rows_written: 50_000 });
    const r = await runCli(["usage"], {
      body: {
        ...sample,
        today: calm,
        free_plan: { ...sample.free_plan, today_share: shareOf(calm), today_near: [] },
        paid_plan: { ...sample.paid_plan, totalUsd: 5.125, overageUsd: { ...sample.paid_plan.overageUsd, d1_rows_written: 0.125 } },
      },
    });
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^D1 rows written\s+312,000\s+50,000\s+100,000\s+50 %$/m);
    expect(r.stdout).toContain(
      "\nWorkers Paid this month: $5.13 ($5.00 base + $0.13 beyond the included amounts)\nFree plan: within the daily limits\n",
    );
  });

  it("--month: that month (no today), its average day past a limit, today past one, and no invocation counted", async () => {
    const r = await runCli(["usage", "--month", "2026-11"], {
      body: {
        ...sample,
        month: "2026-11",
        from: "2026-11-01",
        to: "2026-11-30",
        days_elapsed: 30,
        today: units({}),
        free_plan: {
          ...sample.free_plan,
          share: { ...sample.free_plan.share, d1_rows_written: 1.2 },
          exceeded: ["d1_rows_written"],
          today_share: {},
          today_near: [],
        },
        largest_invocations: [],
      },
    });
    expect(r.code).toBe(0);
    expect(new URL(r.requests[0]!.url).searchParams.get("month")).toBe("2026-11");
    expect(r.stdout).toContain("Cloudflare usage, 2026-11-01 to 2026-11-30 (UTC), as the coordinator counted it\n");
    expect(r.stdout).toMatch(/^D1 rows written\s+312,000\s+-\s+100,000\s+-$/m);
    expect(r.stdout).toContain("Free plan: past the daily limit on the month's average day: D1 rows written (120 %)\n");
    expect(r.stdout).toContain("Largest invocation (this isolate): none counted yet\n");

    const past = await runCli(["usage"], {
      body: {
        ...sample,
        free_plan: { ...sample.free_plan, today_share: { ...sample.free_plan.today_share, do_requests: 1.05 } },
        today: { ...today, do_requests: 105_000 },
      },
    });
    expect(past.stdout).toContain(
      "Free plan: past the daily limit today: Durable Object requests (105,000 of 100,000, 105 %); " +
        "near the daily limit today: D1 rows written (85,000 of 100,000, 85 %) " +
        "(past a limit, Cloudflare refuses more of that until 00:00 UTC)\n",
    );
  });

  it("--json prints the API's answer as is", async () => {
    const r = await runCli(["usage", "--json"], { body: sample });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`${JSON.stringify(sample, null, 2)}\n`);
  });

  it("a --month that is not YYYY-MM is a usage error (exit 2) and nothing is sent", async () => {
    for (const bad of ["2026-13", "2026-1", "11-2026", "2026-11-01", "last"]) {
      const r = await runCli(["usage", "--month", bad], { body: sample });
      expect(r.code).toBe(2);
      expect(r.requests).toHaveLength(0);
      expect(r.stdout).toBe("");
      expect(r.stderr).toBe(`edgerunner: --month: a month as YYYY-MM, not "${bad}"\n`);
    }
  });

  it("is in the help", async () => {
    const all = await runCli(["--help"], { body: {} });
    expect(all.stdout).toMatch(/^ {2}usage\s+Show what the coordinator spent this month/m);
    const one = await runCli(["usage", "--help"], { body: {} });
    expect(one.stdout).toContain("usage: edgerunner usage [options]");
    expect(one.stdout).toMatch(/--month YYYY-MM\s+another month/);
  });
});
