import { describe, expect, it } from "vitest";
import type { UsageFacts } from "../../../src/doctor/facts";
import { USAGE_CHECK_ID, usageCheck } from "../../../src/doctor/usage-checks";
import { type TalliedRow, usageReport } from "../../../src/usage/usage-report";

// 15:00 UTC on the 7th: 6.625 days of December gone, 9 hours until the daily limits reset.
const NOW = Date.parse("2026-12-07T15:00:00.000Z");
const TODAY = "2026-12-07";

const row = (day: string, unit: string, kind: string, value: number): TalliedRow => ({ day, unit, kind, value });
/** The same quiet day (a small installation's) on each of the 1st to the 6th. */
const quietWeek = (): TalliedRow[] =>
  [1, 2, 3, 4, 5, 6].flatMap((d) => {
    const day = `2026-12-0${d}`;
    return [
      row(day, "worker_requests", "webhook", 2_000),
      row(day, "do_requests", "alarm", 3_000),
      row(day, "d1_rows_read", "reconcile", 300_000),
      row(day, "d1_rows_written", "reconcile", 6_000),
      row(day, "d1_rows_written", "webhook", 2_000),
    ];
  });
const facts = (rows: TalliedRow[], planSetting: string | null): UsageFacts => ({ planSetting, report: usageReport(rows, "2026-12", NOW) });

describe("this month's usage on the Free plan", () => {
  it("today at 85 % of the 100,000 D1 rows written a day: a warning naming the unit, the figures, the cause and what to do", () => {
    const rows = [...quietWeek(), row(TODAY, "d1_rows_written", "reconcile", 60_000), row(TODAY, "d1_rows_written", "webhook", 25_000)];
    const c = usageCheck(facts(rows, "free"), NOW);
    expect(c.id).toBe(USAGE_CHECK_ID);
    expect(c.status).toBe("warn");
    // The month: 6 × 8,000 + 85,000 = 133,000 over 6.625 days, 20,075 a day (20 %); today 85,000 (85 %).
    expect(c.summary).toBe(
      "Near the Free plan's daily limits: D1 rows written: this month's average day 20,075 (20 % of the Free plan's 100,000 a day), today 85,000 (85 %).",
    );
    // The month's D1 rows written: reconcile 96,000 of 133,000.
    expect(c.fix).toBe(
      "D1 rows written are mostly reconcile (72 % of the month's); see docs/performance.md#what-it-costs for what spends each unit, " +
        "or move to Workers Paid (subscribe, then set CLOUDFLARE_PLAN=paid and deploy)",
    );
    expect(c.details).toMatchObject({ plan: "free", plan_setting: "free", month: "2026-12", today: { d1_rows_written: 85_000 } });
  });

  it("an average day past 80 % of a limit warns too, though today is quiet", () => {
    // 6 days of 90,000 Durable Object requests and 10,000 today: 550,000 over 6.625 days, 83,019 a day.
    const rows = [
      ...[1, 2, 3, 4, 5, 6].map((d) => row(`2026-12-0${d}`, "do_requests", "alarm", 90_000)),
      row(TODAY, "do_requests", "alarm", 10_000),
    ];
    const c = usageCheck(facts(rows, "free"), NOW);
    expect(c.status).toBe("warn");
    expect(c.summary).toContain(
      "Durable Object requests: this month's average day 83,019 (83 % of the Free plan's 100,000 a day), today 10,000 (10 %)",
    );
    expect(c.fix).toContain("Durable Object requests are mostly alarm (100 % of the month's)");
  });

  it("today past a limit: a failure saying what Cloudflare refuses until 00:00 UTC, and the units near one too", () => {
    const rows = [
      ...quietWeek(),
      row(TODAY, "worker_requests", "webhook", 70_000),
      row(TODAY, "worker_requests", "bootstrap", 34_000),
      row(TODAY, "d1_rows_written", "reconcile", 81_000),
    ];
    const c = usageCheck(facts(rows, "free"), NOW);
    expect(c.status).toBe("fail");
    expect(c.summary).toBe(
      "Past the Free plan's daily limit today: Worker requests 104,000 of 100,000. " +
        "Cloudflare refuses further requests to the Worker (webhooks, runners' callbacks, the API) until 00:00 UTC (in 9 h 0 min). " +
        "Near a limit too: D1 rows written: this month's average day 19,472 (19 % of the Free plan's 100,000 a day), today 81,000 (81 %).",
    );
    // Worker requests this month: webhook 12,000 + 70,000 of 116,000.
    expect(c.fix).toMatch(
      /^Worker requests are mostly webhook \(70 % of the month's\); D1 rows written are mostly reconcile \(90 % of the month's\); see /,
    );
  });

  it("within every limit: ok, with the month's figures and the closest limit in one line", () => {
    const c = usageCheck(facts(quietWeek(), "free"), NOW);
    expect(c.status).toBe("ok");
    expect(c.fix).toBeUndefined();
    expect(c.summary).toBe(
      "Within the Free plan's daily limits. This month so far (2026-12-01 to 2026-12-07): Worker requests 12,000, Durable Object requests 18,000, " +
        "Durable Object duration (GB-s) 0, D1 rows read 1,800,000, D1 rows written 48,000, DO storage rows read 0, DO storage rows written 0; " +
        "the closest limit is D1 rows written (an average day 7 %, today 0 %). Worker CPU time is not counted.",
    );
  });
});

describe("this month's usage on Workers Paid", () => {
  it("says the bill so far, base and overage", () => {
    // 50,120,000 D1 rows written: 120,000 past the included 50 million, at $1 a million.
    const rows = [row("2026-12-03", "d1_rows_written", "reconcile", 50_000_000), row(TODAY, "d1_rows_written", "reconcile", 120_000)];
    const c = usageCheck(facts(rows, "paid"), NOW);
    expect(c.status).toBe("ok");
    expect(c.summary).toBe(
      "On Workers Paid: this month's bill so far is $5.12 ($5.00 base + $0.12 beyond the included amounts). Worker CPU time is not counted.",
    );
    expect(c.details).toMatchObject({ plan: "paid", paid_plan: { totalUsd: 5.12, baseUsd: 5, overageUsd: { d1_rows_written: 0.12 } } });
  });

  it("past $1 beyond the included amounts: still ok, and says what it is spent on", () => {
    const rows = [
      row("2026-12-03", "d1_rows_written", "reconcile", 50_000_000),
      row(TODAY, "d1_rows_written", "listener", 2_500_000),
      row(TODAY, "do_requests", "alarm", 2_000_000),
    ];
    const c = usageCheck(facts(rows, "paid"), NOW);
    expect(c.status).toBe("ok");
    // D1: 2.5 M past the included amount at $1; Durable Object requests: 1 M past at $0.15.
    expect(c.summary).toBe(
      "On Workers Paid: this month's bill so far is $7.65 ($5.00 base + $2.65 beyond the included amounts). " +
        "More than $1.00 beyond them: D1 rows written $2.50, mostly reconcile; Durable Object requests $0.15, mostly alarm; " +
        "see docs/performance.md#what-it-costs. Worker CPU time is not counted.",
    );
  });

  it("never warns, however far past the Free plan's limits; unset CLOUDFLARE_PLAN is Workers Paid", () => {
    const rows = [...quietWeek(), row(TODAY, "worker_requests", "webhook", 500_000), row(TODAY, "d1_rows_written", "reconcile", 900_000)];
    const c = usageCheck(facts(rows, null), NOW);
    expect(c.status).toBe("ok");
    expect(c.summary).toMatch(/^On Workers Paid \(CLOUDFLARE_PLAN unset: paid is the default\): this month's bill so far is \$5\.00 /);
    expect(usageCheck(facts(rows, "enterprise"), NOW).status).toBe("ok");
  });
});
