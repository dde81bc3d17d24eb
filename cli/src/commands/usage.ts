/**
 * `edgerunner usage`: what the coordinator spent this month (or another) in Cloudflare's billing
 * units, as it counted them, against the Free plan's daily limits, and its Workers Paid bill
 * (docs/performance.md "What it costs").
 */

import type { components } from "../api-types.ts";
import { unwrap } from "../client.ts";
import { type Command, str } from "../command.ts";
import { UsageError } from "../errors.ts";
import { renderTable } from "../table.ts";

type Usage = components["schemas"]["Usage"];
type Unit = keyof Usage["units"];

/** Where the costs are explained. */
const COSTS_DOC = "docs/performance.md#what-it-costs";

/** The units in the coordinator's order, with what a person reads for each. */
const LABELS: Record<Unit, string> = {
  worker_requests: "Worker requests",
  worker_cpu_ms: "Worker CPU (ms)",
  do_requests: "Durable Object requests",
  do_gb_s: "Durable Object duration (GB-s)",
  d1_rows_read: "D1 rows read",
  d1_rows_written: "D1 rows written",
  do_rows_read: "DO storage rows read",
  do_rows_written: "DO storage rows written",
};
const UNITS = Object.keys(LABELS) as Unit[];

/**
 * The Free plan's limits. The source is the coordinator's src/usage/price-table.ts
 * (CLOUDFLARE_PRICES.free): change them there first, then here. Worker CPU has no daily limit,
 * only the 10 ms each invocation may use.
 */
export const FREE_PLAN: { daily: Partial<Record<Unit, number>>; perInvocation: { subrequests: number; d1Queries: number } } = {
  daily: {
    worker_requests: 100_000,
    do_requests: 100_000,
    do_gb_s: 13_000,
    d1_rows_read: 5_000_000,
    d1_rows_written: 100_000,
    do_rows_read: 5_000_000,
    do_rows_written: 100_000,
  },
  perInvocation: { subrequests: 50, d1Queries: 50 },
};

/** From this share of a daily limit a unit is near it (as the coordinator's setup check warns). */
const NEAR = 0.8;

const grouped = new Intl.NumberFormat("en-US", { maximumFractionDigits: 0 });
const oneDecimal = new Intl.NumberFormat("en-US", { minimumFractionDigits: 1, maximumFractionDigits: 1 });

/** A count with thousands separators; GB-s to one decimal. */
export const formatUnit = (unit: Unit, n: number): string => (unit === "do_gb_s" ? oneDecimal : grouped).format(n);

/** A share in whole percent, rounded down so 99.9 % never reads as 100 %: "85 %", "< 1 %", "0 %". */
export function formatShare(share: number): string {
  if (!(share > 0)) return "0 %";
  if (share < 0.01) return "< 1 %";
  return `${grouped.format(Math.floor(share * 100 + 1e-9))} %`;
}

/** Dollars to the cent: "$5.12", "$0.00" for nothing, "< $0.01" for less than a cent. */
export function formatUsd(usd: number): string {
  if (!(usd > 0)) return "$0.00";
  const cents = Math.round(Number((usd * 100).toPrecision(12)));
  if (cents === 0) return "< $0.01";
  return `$${grouped.format(Math.floor(cents / 100))}.${String(cents % 100).padStart(2, "0")}`;
}

interface Row {
  label: string;
  month: string;
  today: string;
  limit: string;
  share: string;
}

/** The table of units; Worker CPU, which is not counted, is a line of its own under it. */
export function usageTable(d: Usage): string {
  // today_share is empty for a month other than the current one: it has no today.
  const current = Object.keys(d.free_plan.today_share).length > 0;
  const rows: Row[] = UNITS.filter((u) => u !== "worker_cpu_ms").map((unit) => {
    const limit = FREE_PLAN.daily[unit];
    const share = d.free_plan.today_share[unit];
    return {
      label: LABELS[unit],
      month: formatUnit(unit, d.units[unit]),
      today: current ? formatUnit(unit, d.today[unit]) : "-",
      limit: limit === undefined ? "-" : grouped.format(limit),
      share: share === undefined ? "-" : formatShare(share),
    };
  });
  const table = renderTable<Row>(
    [
      { header: "UNIT", value: (r) => r.label },
      { header: "THIS MONTH", value: (r) => r.month },
      { header: "TODAY", value: (r) => r.today },
      { header: "FREE PLAN DAILY LIMIT", value: (r) => r.limit },
      { header: "TODAY'S SHARE", value: (r) => r.share },
    ],
    rows,
  );
  const width = Math.max("UNIT".length, ...rows.map((r) => r.label.length));
  return `${table}${LABELS.worker_cpu_ms.padEnd(width)}  not counted (see ${COSTS_DOC})\n`;
}

/** "Free plan: within the daily limits", or the units today (and the month's average day) near or past them. */
export function freePlanLine(d: Usage): string {
  const fp = d.free_plan;
  const today = UNITS.flatMap((unit) => {
    const share = fp.today_share[unit];
    const limit = FREE_PLAN.daily[unit];
    return share === undefined || limit === undefined || share < NEAR ? [] : [{ unit, share, limit }];
  }).sort((a, b) => b.share - a.share);
  const figures = (t: (typeof today)[number]) =>
    `${LABELS[t.unit]} (${formatUnit(t.unit, d.today[t.unit])} of ${grouped.format(t.limit)}, ${formatShare(t.share)})`;
  const averageOf = (units: string[]) => units.map((u) => `${LABELS[u as Unit] ?? u} (${formatShare(fp.share[u] ?? 0)})`).join(", ");
  const past = today.filter((t) => t.share >= 1);
  const near = today.filter((t) => t.share < 1);
  const parts = [
    ...(past.length ? [`past the daily limit today: ${past.map(figures).join(", ")}`] : []),
    ...(near.length ? [`near the daily limit today: ${near.map(figures).join(", ")}`] : []),
    ...(fp.exceeded.length ? [`past the daily limit on the month's average day: ${averageOf(fp.exceeded)}`] : []),
    ...(fp.near.length ? [`near the daily limit on the month's average day: ${averageOf(fp.near)}`] : []),
  ];
  if (!parts.length) return "Free plan: within the daily limits\n";
  const refused = past.length ? " (past a limit, Cloudflare refuses more of that until 00:00 UTC)" : "";
  return `Free plan: ${parts.join("; ")}${refused}\n`;
}

/** The 3 causes that wrote the most D1 rows this month, with their figures. */
export function topD1Writers(d: Usage, n = 3): string {
  const total = d.units.d1_rows_written;
  const top = d.by_kind
    .filter((k) => k.units.d1_rows_written > 0)
    .sort((a, b) => b.units.d1_rows_written - a.units.d1_rows_written || (a.kind < b.kind ? -1 : 1))
    .slice(0, n);
  if (!top.length) return "What spent the most D1 rows written: nothing wrote a D1 row\n";
  const width = Math.max(...top.map((k) => k.kind.length));
  const lines = top.map(
    (k) =>
      `  ${`${k.kind}:`.padEnd(width + 1)} ${grouped.format(k.units.d1_rows_written)} written (${formatShare(k.units.d1_rows_written / total)} of the month's), ${grouped.format(k.units.d1_rows_read)} read`,
  );
  return `What spent the most D1 rows written:\n${lines.join("\n")}\n`;
}

/** The invocation that came nearest the Free plan's per-invocation limits (both 50). */
export function largestLine(d: Usage): string {
  const { subrequests, d1Queries } = FREE_PLAN.perInvocation;
  const weight = (l: Usage["largest_invocations"][number]) => Math.max(l.subrequests / subrequests, l.d1_queries / d1Queries);
  const top = d.largest_invocations.reduce<Usage["largest_invocations"][number] | undefined>(
    (best, l) =>
      !best || weight(l) > weight(best) || (weight(l) === weight(best) && l.subrequests + l.d1_queries > best.subrequests + best.d1_queries)
        ? l
        : best,
    undefined,
  );
  if (!top) return "Largest invocation (this isolate): none counted yet\n";
  return (
    `Largest invocation (this isolate): ${grouped.format(top.subrequests)} subrequests, ${grouped.format(top.d1_queries)} D1 queries (${top.kind}) ` +
    `(the Free plan allows ${subrequests} and ${d1Queries})\n`
  );
}

/** Everything `edgerunner usage` prints for people. */
export function usageText(d: Usage): string {
  const p = d.paid_plan;
  return [
    `Cloudflare usage, ${d.from} to ${d.to} (UTC), as the coordinator counted it\n`,
    "\n",
    usageTable(d),
    "\n",
    `Workers Paid this month: ${formatUsd(p.totalUsd)} (${formatUsd(p.baseUsd)} base + ${formatUsd(p.totalUsd - p.baseUsd)} beyond the included amounts)\n`,
    freePlanLine(d),
    "\n",
    topD1Writers(d),
    "\n",
    largestLine(d),
  ].join("");
}

export const usageCommands: Command[] = [
  {
    words: ["usage"],
    summary: "Show what the coordinator spent this month in Cloudflare's billing units, against the Free plan and on Workers Paid",
    options: {
      month: { type: "string", arg: "YYYY-MM", description: "another month (UTC; default: this one)" },
    },
    example: "edgerunner usage --month 2026-11",
    run: async (ctx) => {
      const month = str(ctx.values, "month");
      if (month !== undefined && !/^\d{4}-(0[1-9]|1[0-2])$/.test(month))
        throw new UsageError(`--month: a month as YYYY-MM, not "${month}"`);
      const data = await unwrap(ctx.api().GET("/api/v1/usage", { params: { query: month === undefined ? {} : { month } } }));
      return { data, text: usageText(data) };
    },
  },
];
