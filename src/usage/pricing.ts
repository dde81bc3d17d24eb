import { CLOUDFLARE_PRICES, type PriceTable, UNITS, type Unit, type Units } from "./price-table.ts";

/**
 * What a workload costs on Cloudflare's plans, worked out from the price table (price-table.ts):
 * how many jobs a day fit in the Free plan, what 1,000 more jobs cost on Workers Paid, a month's
 * bill, and how a month so far stands against the Free plan's daily limits. Money is rounded to
 * a millionth of a dollar only in what is returned, so sums of unrounded figures stay exact.
 */

/** What a workload spends: units per job and units a day whatever the jobs (idle scale sets: alarms, orphan checks, listener polls). */
export interface Workload {
  perJob: Units;
  idlePerDay: Units;
}

export interface FreePlanFit {
  /** Whole jobs a day that fit, never negative; `NO_JOB_LIMIT` when no limit binds. */
  jobsPerDay: number;
  /** The unit whose daily limit runs out first, or null when none does (every limited unit's perJob is zero). */
  bindingLimit: Unit | null;
  /** For each unit with a daily limit, the share of it the idle day uses alone (above 1: idle alone is past it). */
  idleShare: Partial<Record<Unit, number>>;
}

/**
 * The `jobsPerDay` of a workload no daily limit binds. A number rather than Infinity so the answer
 * survives JSON (Infinity becomes null there) and sorts and compares like any other count.
 */
export const NO_JOB_LIMIT = Number.MAX_SAFE_INTEGER;

const roundUsd = (usd: number): number => Math.round(usd * 1e6) / 1e6;

/**
 * A quotient that should be whole comes out a hair under it in floating point ((0.7 − 0.1) / 0.2
 * is 2.9999999999999996): count it as the whole number, then floor.
 */
function wholeJobs(jobs: number): number {
  const nearest = Math.round(jobs);
  return Math.abs(jobs - nearest) <= 1e-9 * Math.max(1, nearest) ? nearest : Math.floor(jobs);
}

/** How many jobs a day fit in the Free plan's daily limits after the idle day's usage, and which limit runs out first. */
export function freePlanJobsPerDay(w: Workload, t: PriceTable = CLOUDFLARE_PRICES): FreePlanFit {
  let best = Number.POSITIVE_INFINITY;
  let bindingLimit: Unit | null = null;
  const idleShare: Partial<Record<Unit, number>> = {};
  for (const unit of UNITS) {
    const limit = t.free.daily[unit];
    if (limit === undefined) continue;
    const idle = w.idlePerDay[unit];
    const perJob = w.perJob[unit];
    idleShare[unit] = idle / limit;
    const room = limit - idle;
    // Idle alone past the limit leaves no job; a unit jobs do not spend otherwise never binds.
    const jobs = room < 0 ? 0 : perJob > 0 ? room / perJob : Number.POSITIVE_INFINITY;
    // Strictly less: on a tie the unit listed first in UNITS is named.
    if (jobs < best) {
      best = jobs;
      bindingLimit = unit;
    }
  }
  return { jobsPerDay: bindingLimit === null ? NO_JOB_LIMIT : wholeJobs(best), bindingLimit, idleShare };
}

/** Dollars one of each unit costs past the included amounts, summed over a tally. */
function marginalUsd(units: Units, t: PriceTable): number {
  let usd = 0;
  for (const unit of UNITS) usd += (units[unit] * t.paid.usdPerMillion[unit]) / 1e6;
  return usd;
}

/**
 * Dollars per 1,000 jobs on Workers Paid when the included amounts are already used up (the
 * marginal price), idle included: the idle day's cost spread over `jobsPerDay` jobs. A RangeError
 * when `jobsPerDay` is not above zero, since there is nothing to spread the idle day over.
 */
export function paidUsdPer1000Jobs(w: Workload, jobsPerDay: number, t: PriceTable = CLOUDFLARE_PRICES): number {
  if (!(jobsPerDay > 0)) throw new RangeError(`jobsPerDay must be above zero, not ${jobsPerDay}`);
  const perJob = marginalUsd(w.perJob, t) + marginalUsd(w.idlePerDay, t) / jobsPerDay;
  return roundUsd(perJob * 1000);
}

export interface PaidMonthlyBill {
  totalUsd: number;
  /** The subscription. */
  baseUsd: number;
  /** What each unit spent past its included amount; a unit within it has no entry. */
  overageUsd: Partial<Record<Unit, number>>;
}

/** One month's bill on Workers Paid for a month's usage: $5 plus what each unit spends beyond its included amount, by unit. */
export function paidMonthlyBill(month: Units, t: PriceTable = CLOUDFLARE_PRICES): PaidMonthlyBill {
  const overageUsd: Partial<Record<Unit, number>> = {};
  let total = t.paid.monthlyUsd;
  for (const unit of UNITS) {
    const over = month[unit] - t.paid.includedMonthly[unit];
    if (over <= 0) continue;
    const usd = (over * t.paid.usdPerMillion[unit]) / 1e6;
    overageUsd[unit] = roundUsd(usd);
    total += usd;
  }
  return { totalUsd: roundUsd(total), baseUsd: t.paid.monthlyUsd, overageUsd };
}

export interface FreePlanStanding {
  /** The month's usage divided by the days elapsed. */
  averageDay: Units;
  /** For each unit with a daily limit, the share of it the average day uses. */
  share: Partial<Record<Unit, number>>;
  /** Units whose average day is past `warnShare` of the limit but not past the limit. */
  near: Unit[];
  /** Units whose average day is past the limit. */
  exceeded: Unit[];
}

/**
 * Where a month's usage stands against the Free plan's daily limits: the average day so far
 * (usage / days elapsed) and the share of each limit it uses; `exceeded` lists units whose
 * average day is past its limit, `near` those past `warnShare` (each unit is in one list at most).
 * `daysElapsed` may be fractional; a RangeError when it is not above zero.
 */
export function freePlanStanding(month: Units, daysElapsed: number, warnShare = 0.8, t: PriceTable = CLOUDFLARE_PRICES): FreePlanStanding {
  if (!(daysElapsed > 0)) throw new RangeError(`daysElapsed must be above zero, not ${daysElapsed}`);
  const averageDay = Object.fromEntries(UNITS.map((u) => [u, month[u] / daysElapsed])) as Units;
  const share: Partial<Record<Unit, number>> = {};
  const near: Unit[] = [];
  const exceeded: Unit[] = [];
  for (const unit of UNITS) {
    const limit = t.free.daily[unit];
    if (limit === undefined) continue;
    const s = averageDay[unit] / limit;
    share[unit] = s;
    if (s > 1) exceeded.push(unit);
    else if (s > warnShare) near.push(unit);
  }
  return { averageDay, share, near, exceeded };
}

/** Durable Object duration in GB-s for the seconds an object was active: it is billed for 128 MB whatever it uses. */
export const doGbSeconds = (activeSeconds: number, t: PriceTable = CLOUDFLARE_PRICES): number => activeSeconds * t.doMemoryGb;
