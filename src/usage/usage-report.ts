import { CLOUDFLARE_PRICES, type PriceTable, UNITS, type Unit, type Units, zeroUnits } from "./price-table.ts";
import { doGbSeconds, type FreePlanStanding, freePlanStanding, type PaidMonthlyBill, paidMonthlyBill } from "./pricing.ts";

/**
 * A month's usage in Cloudflare's billing units, from the tallied rows (lib/usage-tally.ts,
 * db/metrics/usage-store.ts), and what it costs on each plan: what the dashboard's overview, the
 * setup check and `GET /api/v1/usage` show. Pure: rows and a clock in, figures out.
 */

/** A tallied row: a day's total of one unit for one cause. */
export interface TalliedRow {
  day: string;
  unit: string;
  kind: string;
  value: number;
}

/** Billing units from tallied ones: active milliseconds become GB-s at 128 MB; subrequests are free. */
export function billingUnits(rows: readonly { unit: string; value: number }[], t: PriceTable = CLOUDFLARE_PRICES): Units {
  const u = zeroUnits();
  for (const r of rows) {
    if (r.unit === "do_active_ms") u.do_gb_s += doGbSeconds(r.value / 1000, t);
    else if ((UNITS as readonly string[]).includes(r.unit)) u[r.unit as Unit] += r.value;
  }
  return u;
}

export interface UsageReport {
  month: string;
  from: string;
  to: string;
  /** Days of the month so far, today counted by the hours gone (the Free plan's limits are daily). */
  days_elapsed: number;
  units: Units;
  today: Units;
  /** Each cause's units this month, subrequests included (what made the spending). */
  by_kind: { kind: string; units: Units; subrequests: number }[];
  by_day: { day: string; units: Units }[];
  free_plan: FreePlanStanding & { today_share: Partial<Record<Unit, number>>; today_near: Unit[] };
  paid_plan: PaidMonthlyBill;
  /** Worker CPU time is not counted here (workerd gives a Worker no CPU clock): the bench measures it. */
  cpu_counted: false;
  prices: { checked: string; sources: Record<string, string> };
}

const DAY_MS = 86_400_000;

/** The month `YYYY-MM` of `now`, its first day and today (UTC). */
export function monthOf(now: number): { month: string; from: string; to: string } {
  const today = new Date(now).toISOString().slice(0, 10);
  return { month: today.slice(0, 7), from: `${today.slice(0, 7)}-01`, to: today };
}

/** The report of one month's rows; `now` inside the month reads it as the month so far. */
export function usageReport(rows: readonly TalliedRow[], month: string, now: number, t: PriceTable = CLOUDFLARE_PRICES): UsageReport {
  const current = monthOf(now);
  const start = Date.parse(`${month}-01T00:00:00Z`);
  const next = new Date(start);
  next.setUTCMonth(next.getUTCMonth() + 1);
  const end = Math.min(now, next.getTime());
  const daysElapsed = Math.max(1 / 24, (end - start) / DAY_MS);
  const lastDay = month === current.month ? current.to : new Date(next.getTime() - DAY_MS).toISOString().slice(0, 10);

  const days = new Map<string, TalliedRow[]>();
  const kinds = new Map<string, TalliedRow[]>();
  for (const r of rows) {
    days.set(r.day, [...(days.get(r.day) ?? []), r]);
    kinds.set(r.kind, [...(kinds.get(r.kind) ?? []), r]);
  }
  const units = billingUnits(rows, t);
  const today = billingUnits(days.get(current.to) ?? [], t);
  const standing = freePlanStanding(units, daysElapsed, 0.8, t);
  // Today against the daily limits (the ones Cloudflare enforces), as far as today has gone.
  const todayShare: Partial<Record<Unit, number>> = {};
  const todayNear: Unit[] = [];
  for (const unit of UNITS) {
    const limit = t.free.daily[unit];
    if (limit === undefined || month !== current.month) continue;
    todayShare[unit] = today[unit] / limit;
    if (todayShare[unit]! >= 0.8) todayNear.push(unit);
  }
  return {
    month,
    from: `${month}-01`,
    to: lastDay,
    days_elapsed: Math.round(daysElapsed * 1000) / 1000,
    units,
    today,
    by_kind: [...kinds]
      .map(([kind, rs]) => ({
        kind,
        units: billingUnits(rs, t),
        subrequests: rs.filter((r) => r.unit === "subrequests").reduce((n, r) => n + r.value, 0),
      }))
      .sort((a, b) => (a.kind < b.kind ? -1 : 1)),
    by_day: [...days].map(([day, rs]) => ({ day, units: billingUnits(rs, t) })).sort((a, b) => (a.day < b.day ? -1 : 1)),
    free_plan: { ...standing, today_share: todayShare, today_near: todayNear },
    paid_plan: paidMonthlyBill(units, t),
    cpu_counted: false,
    prices: { checked: t.checked, sources: t.sources },
  };
}
