import type { StatusChange } from "../db/instance-store";
import type { InstanceStatus, RunnerStatus } from "../db/schema";
import type { LogFields } from "../observability/log";
import { canRunnerTransition } from "./instance-states";
import { type LifecycleLevel, runnerStatusLevel } from "./log-levels";
import { claimOnReport } from "./runner-identity";

/** What a bootstrapping runner reports through the callback routes. */
export interface RunnerReport {
  status: RunnerStatus;
  message: string;
  agentId: number | null;
}

export type RunnerReportRefusal =
  /** The token may not be used (instance-access.ts): answered as any refused instance token is. */
  { error: "unauthorized"; reason: string } | { error: "gone" } | { error: "forbidden"; from: RunnerStatus; to: RunnerStatus };

/**
 * What a runner's report means for its instance: the change to write (`failed` sends the
 * instance to deletion) and whether the runner id it reported was rejected; or why the report
 * is refused: its create attempt is over, or the runner status cannot go there.
 */
export function runnerReportChange(
  row: { id: string; status: InstanceStatus; runnerStatus: RunnerStatus; createAttempt: number; agentId: number | null },
  createAttempt: number,
  report: RunnerReport,
  now: number,
): RunnerReportRefusal | { change: StatusChange; message: string; claimRejected: boolean } {
  if (row.createAttempt !== createAttempt || (row.status !== "creating" && row.status !== "running")) return { error: "gone" };
  if (!canRunnerTransition(row.runnerStatus, report.status)) return { error: "forbidden", from: row.runnerStatus, to: report.status };
  const claim = claimOnReport(row.agentId, report.agentId);
  const failed = report.status === "failed";
  const message = report.message.slice(0, 2000);
  const change: StatusChange = {
    id: row.id,
    from: row.status,
    to: failed ? "pending_delete" : row.status,
    reason: failed ? `runner failed: ${message}` : message || `runner ${report.status}`,
    at: now,
    set: {
      runnerStatus: report.status,
      statusMessage: message,
      recordRunnerReport: true,
      // Kept apart from GitHub's id: removal confirms it at GitHub first (runner-identity.ts).
      ...(claim.record !== null && { reportedAgentId: claim.record }),
      // Online: the store keeps the first such time and counts the runner's startup then.
      ...(report.status === "idle" && { onlineAt: now }),
    },
  };
  return { change, message, claimRejected: claim.rejected };
}

/**
 * The log events of an accepted report, each with its level: its status (bootstrap progress is
 * debug, see log-levels.ts), and the rejected runner id claim if any (info: someone must look).
 */
export function runnerReportEvents(
  at: { scaleSetId: string; instance: string },
  row: { runnerStatus: RunnerStatus; agentId: number | null },
  report: RunnerReport,
  verdict: { message: string; claimRejected: boolean },
): { level: LifecycleLevel; fields: LogFields }[] {
  const where = { scale_set: at.scaleSetId, instance: at.instance };
  const events: { level: LifecycleLevel; fields: LogFields }[] = [
    {
      level: runnerStatusLevel(report.status),
      fields: {
        event: "runner_status",
        ...where,
        from: row.runnerStatus,
        to: report.status,
        message: verdict.message,
        reported_agent_id: report.agentId,
      },
    },
  ];
  if (verdict.claimRejected) {
    events.push({
      level: "info",
      fields: {
        event: "runner_id_claim_rejected",
        ...where,
        runner_id: report.agentId,
        reason: "GitHub gave this runner another id",
        agent_id: row.agentId,
      },
    });
  }
  return events;
}
