import type { FC } from "hono/jsx";
import type { UsageReport } from "../usage/usage-report";
import {
  CPU_NOT_COUNTED,
  freePlanLine,
  paidPlanLine,
  planOf,
  todayNearLimits,
  topD1WriteCauses,
  usageTableRows,
} from "../usage/usage-text";

/**
 * The overview's "Cloudflare usage this month": each billing unit this month and today, today's
 * share of the Free plan's daily limit, and the month's Workers Paid overage; the bill on each
 * plan in a line each, and what wrote the most D1 rows. The figures and words come from
 * usage/usage-text.ts; this only lays them out.
 */
export const UsageSection: FC<{ report: UsageReport; plan: string | undefined }> = ({ report, plan }) => {
  const causes = topD1WriteCauses(report);
  const near = todayNearLimits(report);
  const freeClass = near.some((n) => n.past) ? "bad" : near.length ? "warn" : undefined;
  return (
    <section id="usage">
      <h2>Cloudflare usage this month</h2>
      <p class="mut small" id="usage-plan">
        {`${planOf(plan).sentence} ${report.from} to ${report.to} (UTC), as counted where it was spent; other isolates' last few minutes may not be written yet.`}
      </p>
      <table id="usage-units">
        <thead>
          <tr>
            <th>Unit</th>
            <th class="num">This month</th>
            <th class="num">Today</th>
            <th class="num">Free plan daily limit</th>
            <th class="num">Today's share</th>
            <th class="num">Workers Paid overage</th>
          </tr>
        </thead>
        <tbody>
          {usageTableRows(report).map((r) => (
            <tr data-unit={r.unit}>
              <td>{r.label}</td>
              <td class={r.month === "not counted" ? "num mut" : "num"}>{r.month}</td>
              <td class={r.today === "not counted" ? "num mut" : "num"}>{r.today}</td>
              <td class="num">{r.limit}</td>
              <td class="num">{r.share === null ? "—" : r.level ? <span class={`badge ${r.level}`}>{r.share}</span> : r.share}</td>
              <td class="num">{r.overage}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <p id="usage-bill">
        {`${paidPlanLine(report)} `}
        <span class={freeClass}>{freePlanLine(report)}</span>
      </p>
      <p class="mut small">{CPU_NOT_COUNTED}</p>
      <h3 class="small">What wrote the most D1 rows this month</h3>
      {causes.length ? (
        <ol id="usage-causes" class="small">
          {causes.map((line) => (
            <li>{line}</li>
          ))}
        </ol>
      ) : (
        <p class="mut small" id="usage-causes">
          No D1 rows written this month yet.
        </p>
      )}
    </section>
  );
};
