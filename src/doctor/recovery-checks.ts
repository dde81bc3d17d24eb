import { LAST_PASS_REFRESH_MS } from "../recovery/pass-timing";
import { whatToDo } from "../recovery/watch-status";
import { entitySubject } from "./entity-checks";
import type { EntityFacts, RecoveryFacts, RecoveryMeansFacts } from "./facts";
import { check, type DoctorCheck, type Finding, fromFindings } from "./report";

/**
 * Each entity fed by webhooks: are the deliveries GitHub could not make found again, and how
 * (src/recovery/, docs/github.md "Lost deliveries"). GitHub never sends a failed delivery again;
 * without recovery a lost `queued` leaves its job without a runner until GitHub cancels it.
 */

export const entityRecoveryId = (e: Pick<EntityFacts, "id">) => `entity.recovery:${e.id}`;

const ago = (now: number, at: number) => {
  const s = Math.max(0, Math.round((now - at) / 1000));
  return s < 120 ? `${s} s ago` : s < 7200 ? `${Math.round(s / 60)} min ago` : `${Math.round(s / 3600)} h ago`;
};

const WHERE: Record<RecoveryMeansFacts["kind"], string> = {
  app: "the App's webhook's record of deliveries at GitHub",
  repository: "its repository hook's record of deliveries at GitHub",
  organization: "its organization hook's record of deliveries at GitHub",
  backstop: "the backstop (its queued jobs, asked of the forge)",
};

function meansFinding(m: RecoveryMeansFacts): Finding {
  if (m.kind === "backstop") {
    if (m.status === null || m.status === "ok") return { status: "ok", text: `Lost jobs are found by ${WHERE.backstop}: ${m.reason}.` };
    return { status: "warn", text: `The backstop's last look failed (${m.detail ?? m.status}); it tries again each pass.` };
  }
  if (m.status === null) return { status: "ok", text: `Lost deliveries will be recovered from ${WHERE[m.kind]} (not looked at yet).` };
  if (m.status === "ok") return { status: "ok", text: `Lost deliveries are recovered from ${WHERE[m.kind]}.` };
  const fix = whatToDo(m.kind, m.status);
  return fix
    ? { status: "warn", text: `Cannot read ${WHERE[m.kind]}: ${m.detail ?? m.status}.`, fix }
    : { status: "warn", text: `The last look at ${WHERE[m.kind]} failed (${m.detail ?? m.status}); it tries again each pass.` };
}

export function recoveryCheck(e: EntityFacts, r: RecoveryFacts | undefined, now: number): DoctorCheck | null {
  if (e.recovery === undefined || !r) return null;
  const id = entityRecoveryId(e);
  const subject = entitySubject(e);
  if (e.recovery === null) return check(id, subject, "skip", "No scale set takes its webhook jobs: nothing to recover.");
  const { last24h } = e.recovery;
  const details = {
    means: e.recovery.means.map((m) => ({ kind: m.kind, status: m.status, detail: m.detail })),
    last_24h: last24h,
    last_pass_at: r.lastPassAt === null ? null : new Date(r.lastPassAt).toISOString(),
  };
  if (r.intervalMs === 0) {
    return check(
      id,
      subject,
      "warn",
      "Delivery recovery is off (DELIVERY_RECOVERY_SECONDS=0): a delivery GitHub could not make leaves its job without a runner.",
      {
        fix: "Unset DELIVERY_RECOVERY_SECONDS (default: every 60 s) and deploy",
        details,
      },
    );
  }
  const findings: Finding[] = e.recovery.means.map(meansFinding);
  // A quiet pass records itself every LAST_PASS_REFRESH_MS only.
  const late = Math.max(3 * r.intervalMs, 5 * 60_000) + LAST_PASS_REFRESH_MS;
  if (r.lastPassAt === null || now - r.lastPassAt > late) {
    findings.push({
      status: "warn",
      text:
        r.lastPassAt === null
          ? "Delivery recovery has not run yet."
          : `Delivery recovery last ran ${ago(now, r.lastPassAt)} (every ${r.intervalMs / 1000} s expected).`,
      fix: "It starts with the first scale set's pass and the hourly trigger; `wrangler tail --format json` shows delivery_recovery_failed if it fails",
    });
  }
  const usable = findings.some((f) => f.status === "ok");
  if (!usable)
    findings.push({ status: "fail", text: "Nothing finds its lost deliveries: a job whose delivery fails waits until GitHub cancels it." });
  findings.push({
    status: "ok",
    text: `Last 24 h: ${last24h.failed} failed deliveries seen, ${last24h.recovered} recovered; ${last24h.found} jobs found by the backstop.`,
  });
  return fromFindings(id, subject, findings, "Lost deliveries are recovered.", details);
}
