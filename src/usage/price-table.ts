/**
 * Cloudflare's prices and limits for what the coordinator spends, in one place, with the date they
 * were checked and the page each came from. Everything that prices a workload or judges it
 * against the Free plan reads this table, so when Cloudflare changes a figure it changes here and
 * nowhere else. The figures are Cloudflare's list prices in US dollars; an account with a
 * contract may pay other ones.
 */

/**
 * The units Cloudflare bills that a coordinator spends. Durable Object duration is in GB-s, the
 * unit it is priced in (see `doMemoryGb`); Durable Object storage rows are those of SQLite-backed
 * objects, which are priced like D1 rows but counted apart from them.
 */
export const UNITS = [
  "worker_requests",
  "worker_cpu_ms",
  "do_requests",
  "do_gb_s",
  "d1_rows_read",
  "d1_rows_written",
  "do_rows_read",
  "do_rows_written",
] as const;
export type Unit = (typeof UNITS)[number];
export type Units = Record<Unit, number>;

/** Nothing spent: a fresh tally to add to. */
export const zeroUnits = (): Units => Object.fromEntries(UNITS.map((u) => [u, 0])) as Units;

/** What a person reads for each unit, in tables and charts. */
export const UNIT_LABELS: Record<Unit, string> = {
  worker_requests: "Worker requests",
  worker_cpu_ms: "Worker CPU (ms)",
  do_requests: "Durable Object requests",
  do_gb_s: "Durable Object duration (GB-s)",
  d1_rows_read: "D1 rows read",
  d1_rows_written: "D1 rows written",
  do_rows_read: "DO storage rows read",
  do_rows_written: "DO storage rows written",
};

/** What one invocation (a Worker request, or one alarm or RPC call of a Durable Object) may spend. */
export interface PerInvocationLimits {
  subrequests: number;
  d1Queries: number;
  cpuMs: number;
}

export interface PriceTable {
  /** The day every figure below was last checked against `sources` (an ISO date). */
  checked: string;
  /** The page each block of figures was checked against, by what it covers. */
  sources: Record<string, string>;
  free: {
    /** Daily limits, reset at 00:00 UTC; past one, further operations of that kind fail. */
    daily: Partial<Units>;
    perInvocation: PerInvocationLimits;
  };
  paid: {
    /** The Workers Paid subscription, charged whatever the usage. */
    monthlyUsd: number;
    /** What the subscription includes each month before any unit is charged. */
    includedMonthly: Units;
    /** The price of a million units past the included amount. */
    usdPerMillion: Units;
    perInvocation: PerInvocationLimits;
  };
  /** The memory a Durable Object is billed for while active, in GB: GB-s = active seconds × this. */
  doMemoryGb: 0.125;
}

export const CLOUDFLARE_PRICES: PriceTable = {
  checked: "2026-12-07",
  sources: {
    workersPricing: "https://developers.cloudflare.com/workers/platform/pricing/",
    workersLimits: "https://developers.cloudflare.com/workers/platform/limits/",
    durableObjectsPricing: "https://developers.cloudflare.com/durable-objects/platform/pricing/",
    d1Pricing: "https://developers.cloudflare.com/d1/platform/pricing/",
    d1Limits: "https://developers.cloudflare.com/d1/platform/limits/",
  },
  free: {
    // Worker requests: workersPricing and workersLimits. Durable Objects requests and duration,
    // and SQLite-backed storage rows: durableObjectsPricing (the Free plan may only use
    // SQLite-backed objects). D1 rows: d1Pricing. There is no daily CPU allowance on the Free
    // plan, only the 10 ms each invocation may use, so worker_cpu_ms has no entry.
    daily: {
      worker_requests: 100_000,
      do_requests: 100_000,
      do_gb_s: 13_000,
      d1_rows_read: 5_000_000,
      d1_rows_written: 100_000,
      do_rows_read: 5_000_000,
      do_rows_written: 100_000,
    },
    // Subrequests and CPU: workersLimits. D1 queries per invocation: d1Limits.
    perInvocation: { subrequests: 50, d1Queries: 50, cpuMs: 10 },
  },
  paid: {
    monthlyUsd: 5,
    // Workers requests and CPU: workersPricing ("Standard" usage model). Durable Objects:
    // durableObjectsPricing; its SQLite storage rows are priced like D1 rows (d1Pricing) and
    // counted apart from them. Included amounts reset on the subscription's renewal day.
    includedMonthly: {
      worker_requests: 10_000_000,
      worker_cpu_ms: 30_000_000,
      do_requests: 1_000_000,
      do_gb_s: 400_000,
      d1_rows_read: 25_000_000_000,
      d1_rows_written: 50_000_000,
      do_rows_read: 25_000_000_000,
      do_rows_written: 50_000_000,
    },
    // Cloudflare's Durable Objects examples round the billable amount up to a whole million
    // before pricing it; we price the exact amount, so a real invoice may be up to one million
    // units' price higher for a Durable Object unit. Worker and D1 examples price exact amounts.
    usdPerMillion: {
      worker_requests: 0.3,
      worker_cpu_ms: 0.02,
      do_requests: 0.15,
      do_gb_s: 12.5,
      d1_rows_read: 0.001,
      d1_rows_written: 1,
      do_rows_read: 0.001,
      do_rows_written: 1,
    },
    // Subrequests and CPU: workersLimits. 30 s of CPU is the default limit; a Worker may raise
    // its own to 5 minutes (limits.cpu_ms), but the coordinator does not. D1 queries: d1Limits.
    perInvocation: { subrequests: 10_000, d1Queries: 1_000, cpuMs: 30_000 },
  },
  // durableObjectsPricing: duration is billed for 128 MB per active object, whatever it uses.
  // The same page says what a Durable Object request is: each HTTP request, each RPC method
  // call on a stub (its own RPC session) and each alarm invocation is one billed request; and
  // that each setAlarm() on a SQLite-backed object is billed as one row written.
  doMemoryGb: 0.125,
};
