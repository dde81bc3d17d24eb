import { describe, expect, it } from "vitest";
import { CLOUDFLARE_PRICES, type PriceTable, UNIT_LABELS, UNITS, type Units, zeroUnits } from "../../src/usage/price-table";
import {
  doGbSeconds,
  freePlanJobsPerDay,
  freePlanStanding,
  NO_JOB_LIMIT,
  paidMonthlyBill,
  paidUsdPer1000Jobs,
  type Workload,
} from "../../src/usage/pricing";

const units = (some: Partial<Units>): Units => ({ ...zeroUnits(), ...some });
const workload = (perJob: Partial<Units>, idlePerDay: Partial<Units> = {}): Workload => ({
  perJob: units(perJob),
  idlePerDay: units(idlePerDay),
});

describe("the price table", () => {
  it("labels and prices every unit, and includes a non-negative amount of each on Workers Paid", () => {
    for (const unit of UNITS) {
      expect(UNIT_LABELS[unit], unit).toMatch(/\S/);
      expect(CLOUDFLARE_PRICES.paid.usdPerMillion[unit], unit).toBeGreaterThan(0);
      expect(CLOUDFLARE_PRICES.paid.includedMonthly[unit], unit).toBeGreaterThanOrEqual(0);
    }
    expect(new Set(Object.values(UNIT_LABELS)).size).toBe(UNITS.length);
  });

  it("gives the Free plan a daily limit for every unit but CPU, which it limits only per invocation", () => {
    expect(Object.keys(CLOUDFLARE_PRICES.free.daily).sort()).toEqual(UNITS.filter((u) => u !== "worker_cpu_ms").sort());
    for (const limit of Object.values(CLOUDFLARE_PRICES.free.daily)) expect(limit).toBeGreaterThan(0);
    expect(CLOUDFLARE_PRICES.free.perInvocation.cpuMs).toBe(10);
  });

  it("is dated with an ISO date and sourced from Cloudflare's developer documentation over https", () => {
    expect(CLOUDFLARE_PRICES.checked).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    expect(new Date(`${CLOUDFLARE_PRICES.checked}T00:00:00Z`).toISOString().slice(0, 10)).toBe(CLOUDFLARE_PRICES.checked);
    const sources = Object.values(CLOUDFLARE_PRICES.sources);
    expect(sources.length).toBeGreaterThan(0);
    for (const source of sources) {
      const url = new URL(source);
      expect([url.protocol, url.hostname], source).toEqual(["https:", "developers.cloudflare.com"]);
    }
  });

  it("starts a tally at zero for every unit, a fresh one each time", () => {
    const a = zeroUnits();
    expect(Object.keys(a).sort()).toEqual([...UNITS].sort());
    expect(Object.values(a).every((n) => n === 0)).toBe(true);
    a.do_requests = 5;
    expect(zeroUnits().do_requests).toBe(0);
  });

  it("bills a Durable Object's active seconds at 128 MB", () => {
    expect(doGbSeconds(1_000_000)).toBe(125_000);
  });
});

describe("jobs a day on the Free plan", () => {
  it("fits (limit − idle) / per job of the tightest unit: D1 rows written", () => {
    const fit = freePlanJobsPerDay(workload({ d1_rows_written: 40, do_requests: 20 }, { d1_rows_written: 20_000, do_requests: 10_000 }));
    // D1 rows written: (100,000 − 20,000) / 40 = 2,000; DO requests: (100,000 − 10,000) / 20 = 4,500.
    expect(fit.jobsPerDay).toBe(2_000);
    expect(fit.bindingLimit).toBe("d1_rows_written");
    expect(fit.idleShare.d1_rows_written).toBeCloseTo(0.2, 12);
    expect(fit.idleShare.do_requests).toBeCloseTo(0.1, 12);
    expect(fit.idleShare.worker_requests).toBe(0);
    expect(fit.idleShare).not.toHaveProperty("worker_cpu_ms");
  });

  it("names another unit when its numbers are tighter", () => {
    const fit = freePlanJobsPerDay(workload({ d1_rows_written: 40, do_requests: 50 }, { d1_rows_written: 20_000, do_requests: 10_000 }));
    // DO requests: (100,000 − 10,000) / 50 = 1,800, under D1's 2,000.
    expect(fit).toMatchObject({ jobsPerDay: 1_800, bindingLimit: "do_requests" });
  });

  it("floors a fraction of a job, and ignores CPU, which has no daily limit", () => {
    const fit = freePlanJobsPerDay(workload({ worker_requests: 3, worker_cpu_ms: 1_000_000 }));
    expect(fit).toMatchObject({ jobsPerDay: 33_333, bindingLimit: "worker_requests" });
  });

  it("counts a quotient that floating point puts a hair under a whole number as that number", () => {
    const tiny: PriceTable = { ...CLOUDFLARE_PRICES, free: { ...CLOUDFLARE_PRICES.free, daily: { do_gb_s: 0.7 } } };
    // (0.7 − 0.1) / 0.2 is 2.9999999999999996 in floating point: three jobs, not two.
    expect(freePlanJobsPerDay(workload({ do_gb_s: 0.2 }, { do_gb_s: 0.1 }), tiny).jobsPerDay).toBe(3);
  });

  it("fits no job when idle alone is past a limit, even one jobs do not spend", () => {
    const fit = freePlanJobsPerDay(workload({ d1_rows_written: 40 }, { do_gb_s: 13_500 }));
    expect(fit).toMatchObject({ jobsPerDay: 0, bindingLimit: "do_gb_s" });
    expect(fit.idleShare.do_gb_s).toBeCloseTo(13_500 / 13_000, 12);
  });

  it("lets idle use a limit up to the last unit without binding it when jobs do not spend that unit", () => {
    const fit = freePlanJobsPerDay(workload({ d1_rows_written: 40 }, { do_gb_s: 13_000 }));
    expect(fit).toMatchObject({ jobsPerDay: 2_500, bindingLimit: "d1_rows_written" });
  });

  it("fits no job, never a negative number, when idle is past the limit jobs also spend", () => {
    expect(freePlanJobsPerDay(workload({ d1_rows_written: 40 }, { d1_rows_written: 150_000 }))).toMatchObject({
      jobsPerDay: 0,
      bindingLimit: "d1_rows_written",
    });
  });

  it("binds nothing when jobs spend nothing the Free plan limits, and says so with a finite count", () => {
    const fit = freePlanJobsPerDay(workload({ worker_cpu_ms: 50 }, { do_requests: 1_000 }));
    expect(fit.bindingLimit).toBeNull();
    expect(fit.jobsPerDay).toBe(NO_JOB_LIMIT);
    expect(Number.isSafeInteger(fit.jobsPerDay)).toBe(true);
    expect(JSON.parse(JSON.stringify(fit)).jobsPerDay).toBe(NO_JOB_LIMIT);
  });
});

describe("the marginal price of 1,000 jobs on Workers Paid", () => {
  it("prices each job's units and spreads the idle day over the day's jobs", () => {
    const w = workload({ worker_requests: 20, d1_rows_written: 40 }, { do_requests: 100_000 });
    // Per job: 20 × $0.30/M + 40 × $1.00/M = $0.000046 → $0.046 per 1,000.
    // Idle: 100,000 × $0.15/M = $0.015 a day over 500 jobs = $0.00003 a job → $0.03 per 1,000.
    expect(paidUsdPer1000Jobs(w, 500)).toBe(0.076);
    // Ten times the jobs: the idle share falls tenfold.
    expect(paidUsdPer1000Jobs(w, 5_000)).toBe(0.049);
  });

  it("rounds to a millionth of a dollar", () => {
    // 1 CPU ms a job: $0.02/M × 1,000 = $0.00002; 7 more rows read: $0.001/M × 7,000 = $0.000007.
    expect(paidUsdPer1000Jobs(workload({ worker_cpu_ms: 1, d1_rows_read: 7 }), 1)).toBe(0.000027);
    // A third of a row written a job: $0.000333333… per 1,000, kept to six places.
    expect(paidUsdPer1000Jobs(workload({ d1_rows_written: 1 / 3 }), 1)).toBe(0.000333);
  });

  it("refuses a day without jobs to spread the idle day over", () => {
    const w = workload({ worker_requests: 1 }, { do_requests: 1 });
    expect(() => paidUsdPer1000Jobs(w, 0)).toThrow(RangeError);
    expect(() => paidUsdPer1000Jobs(w, -1)).toThrow(RangeError);
    expect(() => paidUsdPer1000Jobs(w, Number.NaN)).toThrow(RangeError);
  });
});

describe("a month's bill on Workers Paid", () => {
  it("charges nothing for a unit within its included amount and the overage of one past it", () => {
    const bill = paidMonthlyBill(units({ worker_requests: 8_000_000, d1_rows_written: 62_000_000, do_gb_s: 500_000 }));
    // D1 rows written: 12 M over × $1.00 = $12; DO duration: 100,000 GB-s over × $12.50/M = $1.25.
    expect(bill).toEqual({ totalUsd: 18.25, baseUsd: 5, overageUsd: { d1_rows_written: 12, do_gb_s: 1.25 } });
  });

  it("is the subscription alone for a month within every included amount", () => {
    expect(paidMonthlyBill(CLOUDFLARE_PRICES.paid.includedMonthly)).toEqual({ totalUsd: 5, baseUsd: 5, overageUsd: {} });
  });

  it("matches Cloudflare's own Workers examples", () => {
    // Workers pricing, example 1: 15 M requests at 7 ms of CPU each is $8.00.
    expect(paidMonthlyBill(units({ worker_requests: 15_000_000, worker_cpu_ms: 7 * 15_000_000 }))).toEqual({
      totalUsd: 8,
      baseUsd: 5,
      overageUsd: { worker_requests: 1.5, worker_cpu_ms: 1.5 },
    });
    // Example 4: 100 M requests at 7 ms each is $45.40.
    expect(paidMonthlyBill(units({ worker_requests: 100_000_000, worker_cpu_ms: 7 * 100_000_000 })).totalUsd).toBe(45.4);
  });
});

describe("a month's standing against the Free plan", () => {
  const month = units({
    d1_rows_written: 1_200_000, // 120,000 a day: past 100,000
    do_requests: 850_000, // 85,000 a day: 85 %
    worker_requests: 500_000, // 50,000 a day: 50 %
    do_gb_s: 130_000, // 13,000 a day: right at the limit, not past it
    worker_cpu_ms: 999_000_000, // no daily limit
  });

  it("averages the days so far and lists the units past the limit and those near it", () => {
    const s = freePlanStanding(month, 10);
    expect(s.averageDay.d1_rows_written).toBe(120_000);
    expect(s.averageDay.worker_cpu_ms).toBe(99_900_000);
    expect(s.share.d1_rows_written).toBeCloseTo(1.2, 12);
    expect(s.share.do_requests).toBeCloseTo(0.85, 12);
    expect(s.share).not.toHaveProperty("worker_cpu_ms");
    expect(s.exceeded).toEqual(["d1_rows_written"]);
    expect(s.near).toEqual(["do_requests", "do_gb_s"]);
  });

  it("warns at the share it is given", () => {
    const s = freePlanStanding(month, 10, 0.9);
    expect(s.near).toEqual(["do_gb_s"]);
    expect(freePlanStanding(month, 10, 0.4).near).toEqual(["worker_requests", "do_requests", "do_gb_s"]);
  });

  it("takes part of a day, and refuses none", () => {
    expect(freePlanStanding(units({ worker_requests: 60_000 }), 0.5).exceeded).toEqual(["worker_requests"]);
    expect(() => freePlanStanding(month, 0)).toThrow(RangeError);
  });
});
