import { describe, expect, it } from "vitest";
import { type TalliedRow, usageReport } from "../../src/usage/usage-report";
import {
  formatCount,
  formatShare,
  formatUsd,
  freePlanLine,
  paidPlanLine,
  planOf,
  shareLevel,
  todayNearLimits,
  topD1WriteCauses,
  usageTableRows,
} from "../../src/usage/usage-text";

const NOW = Date.parse("2026-12-07T15:00:00.000Z");
const TODAY = "2026-12-07";
const row = (day: string, unit: string, kind: string, value: number): TalliedRow => ({ day, unit, kind, value });
const report = (rows: TalliedRow[]) => usageReport(rows, "2026-12", NOW);

describe("usage figures as a person reads them", () => {
  it("counts: grouped by thousands, a small fraction (GB-s) to one decimal", () => {
    expect([formatCount(0), formatCount(999), formatCount(85_000), formatCount(25_000_000_000), formatCount(1234.6)]).toEqual([
      "0",
      "999",
      "85,000",
      "25,000,000,000",
      "1,235",
    ]);
    expect([formatCount(12.34), formatCount(0.05), formatCount(Number.NaN)]).toEqual(["12.3", "0.1", "—"]);
  });

  it("shares of a limit: whole percent rounded down, so only a limit reached reads 100 %", () => {
    expect([0, 0.004, 0.01, 0.85, 0.9999, 1, 1.2].map(formatShare)).toEqual(["0 %", "< 1 %", "1 %", "85 %", "99 %", "100 %", "120 %"]);
    expect([undefined, 0.79, 0.8, 0.9999, 1, 3].map(shareLevel)).toEqual([null, null, "warn", "warn", "bad", "bad"]);
  });

  it("dollars to the cent", () => {
    expect([0, 0.001, 0.005, 0.085, 0.12, 5, 5.085, 5.123, 1234.5].map(formatUsd)).toEqual([
      "$0.00",
      "< $0.01",
      "$0.01",
      "$0.09",
      "$0.12",
      "$5.00",
      "$5.09",
      "$5.12",
      "$1,234.50",
    ]);
  });

  it("the plan CLOUDFLARE_PLAN names, as the budgets read it", () => {
    expect(planOf("free")).toEqual({ plan: "free", sentence: "This deployment says it is on the Free plan (CLOUDFLARE_PLAN=free)." });
    expect(planOf("paid").sentence).toBe("This deployment says it is on Workers Paid (CLOUDFLARE_PLAN=paid).");
    expect(planOf(undefined)).toEqual({
      plan: "paid",
      sentence: "This deployment says it is on Workers Paid (CLOUDFLARE_PLAN is unset; paid is the default).",
    });
    expect(planOf("Free").plan).toBe("paid");
  });
});

describe("the overview's usage table and lines", () => {
  const rows = [
    row("2026-11-30", "d1_rows_written", "reconcile", 9_000_000), // last month: not in December's
    row("2026-12-03", "d1_rows_written", "reconcile", 50_000_000),
    row(TODAY, "d1_rows_written", "reconcile", 60_000),
    row(TODAY, "d1_rows_written", "webhook", 25_000),
    row(TODAY, "d1_rows_read", "reconcile", 400_000),
    row(TODAY, "worker_requests", "webhook", 101_000),
    row(TODAY, "do_active_ms", "alarm", 80_000_000), // 10,000 GB-s
  ].filter((r) => r.day.startsWith("2026-12"));

  it("one row per billing unit: the month, today, the Free plan's daily limit and today's share, the Workers Paid overage", () => {
    const table = usageTableRows(report(rows));
    expect(table.map((r) => r.label)).toEqual([
      "Worker requests",
      "Worker CPU (ms)",
      "Durable Object requests",
      "Durable Object duration (GB-s)",
      "D1 rows read",
      "D1 rows written",
      "DO storage rows read",
      "DO storage rows written",
    ]);
    const byUnit = Object.fromEntries(table.map((r) => [r.unit, r]));
    expect(byUnit.d1_rows_written).toEqual({
      unit: "d1_rows_written",
      label: "D1 rows written",
      month: "50,085,000",
      today: "85,000",
      limit: "100,000",
      share: "85 %",
      level: "warn",
      overage: "$0.09",
    });
    expect(byUnit.worker_requests).toMatchObject({ today: "101,000", share: "101 %", level: "bad", overage: "$0.00" });
    expect(byUnit.do_gb_s).toMatchObject({ month: "10,000", limit: "13,000", share: "76 %", level: null });
    expect(byUnit.worker_cpu_ms).toMatchObject({ month: "not counted", today: "not counted", limit: "—", share: null, overage: "—" });
  });

  it("the bill on Workers Paid and where today stands on the Free plan", () => {
    const r = report(rows);
    expect(paidPlanLine(r)).toBe("On Workers Paid this month: $5.09 (the $5.00 base + $0.09 beyond the included amounts).");
    expect(todayNearLimits(r).map((n) => [n.unit, n.past])).toEqual([
      ["worker_requests", true],
      ["d1_rows_written", false],
    ]);
    expect(freePlanLine(r)).toBe(
      "On the Free plan: today's Worker requests passes the daily limit (101,000 of 100,000, 101 %); " +
        "today's D1 rows written nears the daily limit (85,000 of 100,000, 85 %). Past a limit, Cloudflare refuses more of that until 00:00 UTC.",
    );
    const quiet = report([row(TODAY, "d1_rows_written", "reconcile", 1_000)]);
    expect(freePlanLine(quiet)).toBe("On the Free plan: today's usage fits within every daily limit.");
    expect(paidPlanLine(quiet)).toBe("On Workers Paid this month: $5.00 (the $5.00 base + $0.00 beyond the included amounts).");
  });

  it("the five causes that wrote the most D1 rows, most first", () => {
    const kinds = ["reconcile", "listener", "webhook", "alarm", "retention", "dashboard", "bootstrap"];
    const r = report(
      kinds.map((k, i) => row(TODAY, "d1_rows_written", k, (7 - i) * 1_000)).concat(row(TODAY, "d1_rows_read", "reconcile", 9_000)),
    );
    expect(topD1WriteCauses(r)).toEqual([
      "reconcile: 7,000 D1 rows written (25 % of the month's), 9,000 read",
      "listener: 6,000 D1 rows written (21 % of the month's), 0 read",
      "webhook: 5,000 D1 rows written (17 % of the month's), 0 read",
      "alarm: 4,000 D1 rows written (14 % of the month's), 0 read",
      "retention: 3,000 D1 rows written (10 % of the month's), 0 read",
    ]);
    expect(topD1WriteCauses(report([row(TODAY, "worker_requests", "webhook", 3)]))).toEqual([]);
  });
});
