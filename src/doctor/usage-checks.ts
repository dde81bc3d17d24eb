import { CLOUDFLARE_PRICES, type PriceTable, UNIT_LABELS, UNITS, type Unit } from "../usage/price-table";
import { COSTS_DOC, formatCount, formatShare, formatUsd, NEAR_SHARE, planOf, topCause } from "../usage/usage-text";
import type { UsageFacts } from "./facts";
import { check, type DoctorCheck } from "./report";

/**
 * What the deployment spent this month in Cloudflare's billing units against the plan it says it
 * is on (`CLOUDFLARE_PLAN`). On the Free plan the daily limits are hard: past one, Cloudflare
 * refuses further operations of that type until 00:00 UTC, and runners stop coming. On Workers
 * Paid nothing is refused, only billed, so the check says the bill and never warns.
 */

export const USAGE_CHECK_ID = "cloudflare.usage";
const SUBJECT = "Cloudflare usage";

/** What Cloudflare refuses once a unit's daily limit is used up. */
const REFUSED: Record<Unit, string> = {
  worker_requests: "requests to the Worker (webhooks, runners' callbacks, the API)",
  worker_cpu_ms: "Worker CPU",
  do_requests: "calls to the scale set objects",
  do_gb_s: "Durable Object work",
  d1_rows_read: "D1 reads",
  d1_rows_written: "D1 writes",
  do_rows_read: "Durable Object storage reads",
  do_rows_written: "Durable Object storage writes",
};

/** Past this much beyond the included amounts, the paid check says what it is spent on. */
export const PAID_OVERAGE_NOTE_USD = 1;

/** How long until the daily limits reset (00:00 UTC): "3 h 20 min". */
function untilMidnight(now: number): string {
  const midnight = new Date(now);
  midnight.setUTCHours(24, 0, 0, 0);
  const min = Math.max(1, Math.ceil((midnight.getTime() - now) / 60_000));
  return min < 60 ? `${min} min` : `${Math.floor(min / 60)} h ${min % 60} min`;
}

/** "D1 rows written are mostly reconcile (62 % of the month's)", or null when nothing spent it. */
function mostly(f: UsageFacts, unit: Unit): string | null {
  const top = topCause(f.report, unit);
  return top && `${UNIT_LABELS[unit]} are mostly ${top.kind} (${formatShare(top.share)} of the month's)`;
}

export function usageCheck(f: UsageFacts, now: number, t: PriceTable = CLOUDFLARE_PRICES): DoctorCheck {
  const r = f.report;
  const { plan } = planOf(f.planSetting ?? undefined);
  const details = {
    plan,
    plan_setting: f.planSetting,
    month: r.month,
    days_elapsed: r.days_elapsed,
    units: r.units,
    today: r.today,
    average_day_share: r.free_plan.share,
    today_share: r.free_plan.today_share,
    paid_plan: r.paid_plan,
    cpu_counted: r.cpu_counted,
  };
  return plan === "free" ? freePlanCheck(f, now, t, details) : paidPlanCheck(f, details);
}

function freePlanCheck(f: UsageFacts, now: number, t: PriceTable, details: Record<string, unknown>): DoctorCheck {
  const r = f.report;
  const limited = UNITS.filter((u) => t.free.daily[u] !== undefined);
  const avgShare = (u: Unit) => r.free_plan.share[u] ?? 0;
  const todayShare = (u: Unit) => r.free_plan.today_share[u] ?? 0;
  const past = limited.filter((u) => todayShare(u) >= 1);
  const near = limited.filter((u) => !past.includes(u) && (avgShare(u) >= NEAR_SHARE || todayShare(u) >= NEAR_SHARE));
  const figures = (u: Unit) =>
    `${UNIT_LABELS[u]}: this month's average day ${formatCount(r.free_plan.averageDay[u])} (${formatShare(avgShare(u))} of the Free plan's ${formatCount(t.free.daily[u]!)} a day), today ${formatCount(r.today[u])} (${formatShare(todayShare(u))})`;
  const fix = (units: Unit[]) =>
    [
      ...units.map((u) => mostly(f, u)).filter((m): m is string => m !== null),
      `see ${COSTS_DOC} for what spends each unit, or move to Workers Paid (subscribe, then set CLOUDFLARE_PLAN=paid and deploy)`,
    ].join("; ");

  if (past.length) {
    const refused = past.map((u) => REFUSED[u]).join(", ");
    const summary =
      `Past the Free plan's daily limit today: ${past.map((u) => `${UNIT_LABELS[u]} ${formatCount(r.today[u])} of ${formatCount(t.free.daily[u]!)}`).join("; ")}. ` +
      `Cloudflare refuses further ${refused} until 00:00 UTC (in ${untilMidnight(now)}).` +
      (near.length ? ` Near a limit too: ${near.map(figures).join("; ")}.` : "");
    return check(USAGE_CHECK_ID, SUBJECT, "fail", summary, { fix: fix([...past, ...near]), details });
  }
  if (near.length) {
    return check(USAGE_CHECK_ID, SUBJECT, "warn", `Near the Free plan's daily limits: ${near.map(figures).join("; ")}.`, {
      fix: fix(near),
      details,
    });
  }
  const closest = [...limited].sort((a, b) => Math.max(avgShare(b), todayShare(b)) - Math.max(avgShare(a), todayShare(a)))[0]!;
  const month = limited.map((u) => `${UNIT_LABELS[u]} ${formatCount(r.units[u])}`).join(", ");
  return check(
    USAGE_CHECK_ID,
    SUBJECT,
    "ok",
    `Within the Free plan's daily limits. This month so far (${r.from} to ${r.to}): ${month}; the closest limit is ${UNIT_LABELS[closest]} ` +
      `(an average day ${formatShare(avgShare(closest))}, today ${formatShare(todayShare(closest))}). Worker CPU time is not counted.`,
    { details },
  );
}

function paidPlanCheck(f: UsageFacts, details: Record<string, unknown>): DoctorCheck {
  const p = f.report.paid_plan;
  const overage = p.totalUsd - p.baseUsd;
  const unset = f.planSetting === null || f.planSetting === "" ? " (CLOUDFLARE_PLAN unset: paid is the default)" : "";
  let summary = `On Workers Paid${unset}: this month's bill so far is ${formatUsd(p.totalUsd)} (${formatUsd(p.baseUsd)} base + ${formatUsd(overage)} beyond the included amounts).`;
  if (overage > PAID_OVERAGE_NOTE_USD) {
    const spent = (Object.entries(p.overageUsd) as [Unit, number][])
      .sort((a, b) => b[1] - a[1])
      .map(([u, usd]) => {
        const top = topCause(f.report, u);
        return `${UNIT_LABELS[u]} ${formatUsd(usd)}${top ? `, mostly ${top.kind}` : ""}`;
      });
    summary += ` More than ${formatUsd(PAID_OVERAGE_NOTE_USD)} beyond them: ${spent.join("; ")}; see ${COSTS_DOC}.`;
  }
  return check(USAGE_CHECK_ID, SUBJECT, "ok", `${summary} Worker CPU time is not counted.`, { details });
}
