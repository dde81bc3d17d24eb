import type { FC } from "hono/jsx";
import type { CheckStatus, DoctorReport as Report } from "../doctor/report";

/**
 * The setup check's report as the dashboard shows it, on /ui/doctor and on any page that embeds
 * it (the first-run page): one row per check in the report's order (configuration first, then each link as a job travels them),
 * with the fix under every warning and failure. `runDoctor` (src/doctor/gather/run-doctor.ts)
 * makes the report.
 */

export { runDoctor } from "../doctor/gather/run-doctor";

const MARK: Record<CheckStatus, string> = { ok: "✓ ok", warn: "! warn", fail: "✗ fail", skip: "- skip" };
const CLASS: Record<CheckStatus, string> = { ok: "badge ok", warn: "badge warn", fail: "badge bad", skip: "badge" };

/** How many checks ended each way. */
export function countStatuses(report: Report): Record<CheckStatus, number> {
  const n: Record<CheckStatus, number> = { ok: 0, warn: 0, fail: 0, skip: 0 };
  for (const c of report.checks) n[c.status]++;
  return n;
}

export const DoctorReport: FC<{ report: Report }> = ({ report }) => {
  const n = countStatuses(report);
  const verdict = report.ok
    ? n.warn
      ? `Every link works; ${n.warn} warning(s) below.`
      : "Every link works."
    : `${n.fail} check(s) failed: fix them from the top, the first one is usually the cause of the rest.`;
  return (
    <section class="doctor">
      <p class={report.ok ? "flash" : "flash bad"}>{verdict}</p>
      <p class="mut small">{`Checked at ${report.checked_at}: ${n.ok} ok, ${n.warn} warn, ${n.fail} fail, ${n.skip} skipped.`}</p>
      <table id="doctor">
        <thead>
          <tr>
            <th>Result</th>
            <th>What</th>
            <th>Found</th>
          </tr>
        </thead>
        <tbody>
          {report.checks.map((c) => (
            <tr id={c.id}>
              <td>
                <span class={CLASS[c.status]}>{MARK[c.status]}</span>
              </td>
              <td>{c.subject}</td>
              <td class="fault">
                {c.summary}
                {c.fix && (
                  <div class={c.status === "fail" ? "bad" : "warn"}>
                    <strong>Fix: </strong>
                    {c.fix}
                  </div>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
};
