import type { ChangeGuard, StatusChange } from "../../db/runner/instance-store";
import type { InstanceStatus, RunnerStatus } from "../../db/runner/schema";
import type { LogFields } from "../../observability/log";
import { canRunnerTransition } from "../instance-states";
import { type LifecycleLevel, runnerStatusLevel } from "../log-levels";
import type { RunnerReport, RunnerReportRefusal } from "../rpc";
import { usableTokenStates } from "./instance-access";
import { claimOnReport, claimsInAdvance } from "./runner-identity";

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

/** A change decided before its instance is read: written only to a row that still is what it was decided from. */
export type ChangeInAdvance = Omit<StatusChange, "id"> & { guard: Omit<ChangeGuard, "name"> };

/**
 * The report decided in advance, with runnerReportChange itself, for every row its instance may
 * be when the token may be used (usableTokenStates: a live instance, a runner still
 * bootstrapping; each runner id claimsInAdvance tells apart). Each change's `from` and guard are
 * every column its decision read, so the store can read the instance and write, in the same D1
 * round trip, the one change (if any) decided for the row as it is: the same change the row
 * read would get. A row none of them is (a runner id GitHub gave otherwise, a refused token)
 * gets nothing written; the caller decides after the read, as before.
 */
export function reportChangesInAdvance(claims: { ss: string; att: number }, report: RunnerReport, now: number): ChangeInAdvance[] {
  const changes: ChangeInAdvance[] = [];
  for (const state of usableTokenStates(claims)) {
    for (const { agentId } of claimsInAdvance(report.agentId)) {
      const row = { id: "", ...state, createAttempt: claims.att, agentId: agentId ?? null };
      const verdict = runnerReportChange(row, claims.att, report, now);
      if ("error" in verdict) continue;
      const { id: _, ...change } = verdict.change;
      const guard = { scaleSetId: claims.ss, createAttempt: claims.att, runnerStatus: state.runnerStatus };
      changes.push({ ...change, guard: agentId === undefined ? guard : { ...guard, agentId } });
    }
  }
  return changes;
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
