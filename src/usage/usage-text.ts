import type { CloudflarePlan } from "../lib/invocation-cost.ts";
import { CLOUDFLARE_PRICES, type PriceTable, UNIT_LABELS, UNITS, type Unit } from "./price-table.ts";
import type { UsageReport } from "./usage-report.ts";

/**
 * A month's usage (usage-report.ts) in words and figures, as the dashboard's overview and the
 * setup check say it: counts, shares of the Free plan's daily limits, dollars on Workers Paid,
 * and what spent the most. Pure: a report in, text out.
 */

/** From 80 % of a daily limit a unit is near it; at 100 % Cloudflare refuses more until 00:00 UTC. */
export const NEAR_SHARE = 0.8;

/** Where the costs are explained. */
export const COSTS_DOC = "docs/performance.md#what-it-costs";

export const CPU_NOT_COUNTED = `Worker CPU time is not counted here; see ${COSTS_DOC}.`;

/** Whole numbers grouped by thousands (85,000); a fraction below 100 (GB-s) to one decimal. */
export function formatCount(n: number): string {
  if (!Number.isFinite(n)) return "—";
  if (Math.abs(n) < 100 && !Number.isInteger(n)) return String(Math.round(n * 10) / 10);
  return String(Math.round(n)).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
}

/** A share of a limit in whole percent, rounded down so 99.9 % never reads as 100 %: "85 %", "< 1 %", "0 %". */
export function formatShare(share: number): string {
  if (!(share > 0)) return "0 %";
  if (share < 0.01) return "< 1 %";
  return `${formatCount(Math.floor(share * 100 + 1e-9))} %`;
}

/** How a share of a daily limit is shown: `bad` at or past it, `warn` from `NEAR_SHARE`, null under. */
export function shareLevel(share: number | undefined): "bad" | "warn" | null {
  if (share === undefined) return null;
  return share >= 1 ? "bad" : share >= NEAR_SHARE ? "warn" : null;
}

/**
 * Dollars to the cent: "$5.12", "$0.00" for nothing, "< $0.01" for less than a cent. Half a cent
 * rounds up even where floating point leaves it a hair under (5.085 is 5.08499…), so a bill and
 * its base plus overage round alike.
 */
export function formatUsd(usd: number): string {
  if (!(usd > 0)) return "$0.00";
  const cents = Math.round(Number((usd * 100).toPrecision(12)));
  if (cents === 0) return "< $0.01";
  const whole = String(Math.floor(cents / 100)).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
  return `$${whole}.${String(cents % 100).padStart(2, "0")}`;
}

/** The plan `CLOUDFLARE_PLAN` names, as lib/invocation-cost.ts reads it (anything but "free" is paid), and a sentence saying so. */
export function planOf(setting: string | undefined): { plan: CloudflarePlan; sentence: string } {
  if (setting === "free") return { plan: "free", sentence: "This deployment says it is on the Free plan (CLOUDFLARE_PLAN=free)." };
  if (setting === "paid") return { plan: "paid", sentence: "This deployment says it is on Workers Paid (CLOUDFLARE_PLAN=paid)." };
  if (setting === undefined || setting === "")
    return { plan: "paid", sentence: "This deployment says it is on Workers Paid (CLOUDFLARE_PLAN is unset; paid is the default)." };
  return {
    plan: "paid",
    sentence: `This deployment says it is on Workers Paid (CLOUDFLARE_PLAN=${setting} is neither free nor paid, so paid is assumed).`,
  };
}

export interface UsageTableRow {
  unit: Unit;
  label: string;
  month: string;
  today: string;
  /** The Free plan's daily limit; "—" for a unit it limits only per invocation (CPU). */
  limit: string;
  /** Today's share of that limit; null without a limit or a count. */
  share: string | null;
  level: "bad" | "warn" | null;
  /** The month's Workers Paid charge past the included amount. */
  overage: string;
}

/** One row per billing unit: the month, today, the Free plan's daily limit and today's share of it, the Workers Paid overage. */
export function usageTableRows(r: UsageReport, t: PriceTable = CLOUDFLARE_PRICES): UsageTableRow[] {
  return UNITS.map((unit) => {
    const limit = t.free.daily[unit];
    const counted = unit !== "worker_cpu_ms" || r.cpu_counted;
    const share = r.free_plan.today_share[unit];
    return {
      unit,
      label: UNIT_LABELS[unit],
      month: counted ? formatCount(r.units[unit]) : "not counted",
      today: counted ? formatCount(r.today[unit]) : "not counted",
      limit: limit === undefined ? "—" : formatCount(limit),
      share: share === undefined || !counted ? null : formatShare(share),
      level: counted ? shareLevel(share) : null,
      overage: counted ? formatUsd(r.paid_plan.overageUsd[unit] ?? 0) : "—",
    };
  });
}

/** "On Workers Paid this month: $5.12 (the $5.00 base + $0.12 beyond the included amounts)." */
export function paidPlanLine(r: UsageReport): string {
  const p = r.paid_plan;
  return `On Workers Paid this month: ${formatUsd(p.totalUsd)} (the ${formatUsd(p.baseUsd)} base + ${formatUsd(p.totalUsd - p.baseUsd)} beyond the included amounts).`;
}

/** A unit today at or past `NEAR_SHARE` of its Free plan daily limit. */
export interface TodayNearLimit {
  unit: Unit;
  today: number;
  limit: number;
  share: number;
  past: boolean;
}

/** The units today's usage nears or passes the Free plan's daily limit of, those past it first, then by share. */
export function todayNearLimits(r: UsageReport, t: PriceTable = CLOUDFLARE_PRICES): TodayNearLimit[] {
  const near: TodayNearLimit[] = [];
  for (const unit of UNITS) {
    const limit = t.free.daily[unit];
    const share = r.free_plan.today_share[unit];
    if (limit === undefined || share === undefined || share < NEAR_SHARE) continue;
    near.push({ unit, today: r.today[unit], limit, share, past: share >= 1 });
  }
  return near.sort((a, b) => b.share - a.share);
}

/** "On the Free plan: today's usage fits within every daily limit." or which limits it nears or passes, with the figures. */
export function freePlanLine(r: UsageReport, t: PriceTable = CLOUDFLARE_PRICES): string {
  const near = todayNearLimits(r, t);
  if (!near.length) return "On the Free plan: today's usage fits within every daily limit.";
  const parts = near.map(
    (n) =>
      `today's ${UNIT_LABELS[n.unit]} ${n.past ? "passes" : "nears"} the daily limit (${formatCount(n.today)} of ${formatCount(n.limit)}, ${formatShare(n.share)})`,
  );
  const refused = near.some((n) => n.past) ? " Past a limit, Cloudflare refuses more of that until 00:00 UTC." : "";
  return `On the Free plan: ${parts.join("; ")}.${refused}`;
}

/** What spent the most of `unit` this month: its kind and its share of the month's; null when nothing did. */
export function topCause(r: UsageReport, unit: Unit): { kind: string; value: number; share: number } | null {
  let top: { kind: string; value: number } | null = null;
  for (const k of r.by_kind) if (k.units[unit] > 0 && (!top || k.units[unit] > top.value)) top = { kind: k.kind, value: k.units[unit] };
  return top && { ...top, share: r.units[unit] > 0 ? top.value / r.units[unit] : 0 };
}

/** The `n` causes that wrote the most D1 rows this month, one line each: "reconcile: 60,000 D1 rows written (71 % of the month's), 150,000 read". */
export function topD1WriteCauses(r: UsageReport, n = 5): string[] {
  const total = r.units.d1_rows_written;
  return r.by_kind
    .filter((k) => k.units.d1_rows_written > 0)
    .sort((a, b) => b.units.d1_rows_written - a.units.d1_rows_written || (a.kind < b.kind ? -1 : 1))
    .slice(0, n)
    .map(
      (k) =>
        `${k.kind}: ${formatCount(k.units.d1_rows_written)} D1 rows written (${formatShare(k.units.d1_rows_written / total)} of the month's), ${formatCount(k.units.d1_rows_read)} read`,
    );
}
