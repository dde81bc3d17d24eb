import { findInstanceStatement, type InstanceAttempt, type InstanceSummary, instanceFromRow } from "./instance-lookups";
import { type GuardedChange, statusChangeStatements } from "./instance-store";
import type { TokenSubject } from "./jit-mint-store";
import type { InstanceStatus, RunnerStatus } from "./schema";

/**
 * D1 access for what a booting machine reports about itself on the callback routes: its status
 * reports and its system info, each in one round trip with the read of its instance. The write
 * is decided before the read by the caller's pure rules, for every row the instance may be, and
 * guarded by every column each decision read, so at most one lands, on the row it was decided
 * for. The read comes first in the same batch (one transaction), so the caller checks the row
 * it got as any other, and writes apart, as it did before, only when no guard held (a runner id
 * GitHub gave otherwise). Read then written apart, each report took two round trips: three
 * reports and system info per runner, four round trips fewer.
 */

/**
 * Reads the instance `name` and applies whichever of `changes` (a status report decided in
 * advance, runner-report.ts) was decided for the row as it is; `applied` says whether one was.
 */
export async function readAndApplyRunnerReport(
  db: D1Database,
  name: string,
  changes: (Omit<GuardedChange, "guard"> & { guard: Omit<GuardedChange["guard"], "name"> })[],
): Promise<{ instance: InstanceSummary | null; applied: boolean }> {
  const writes = statusChangeStatements(
    db,
    changes.map((c) => ({ ...c, guard: { ...c.guard, name } })),
  );
  const [found, ...written] = await db.batch<Record<string, any>>([findInstanceStatement(db, name, { withJitConfig: false }), ...writes]);
  return {
    instance: instanceFromRow(found!.results[0], { withJitConfig: false }),
    // The last statement RETURNS the ids it changed.
    applied: (written.at(-1)?.results.length ?? 0) > 0,
  };
}

/** What a machine says about its OS; an absent value keeps what is there. */
export interface SystemInfo {
  osName: string | null;
  osVersion: string | null;
}

/** System info decided in advance for an instance holding `agentId` (left out: any): the runner id claim to record. */
export interface SystemInfoWrite {
  agentId?: number | null;
  reportedAgentId: number | null;
}

/** What a booting machine says about its OS and runner id; absent values keep what is there. */
export async function recordSystemInfo(
  db: D1Database,
  inst: InstanceAttempt,
  info: SystemInfo & { reportedAgentId: number | null },
  at: number,
): Promise<void> {
  await db
    .prepare(
      `UPDATE instances SET os_name = coalesce(?, os_name), os_version = coalesce(?, os_version), reported_agent_id = coalesce(?, reported_agent_id), updated_at = ?
        WHERE id = ? AND create_attempt = ?`,
    )
    .bind(info.osName, info.osVersion, info.reportedAgentId, at, inst.id, inst.createAttempt)
    .run();
}

/**
 * Reads the instance the token names and records its system info in the same round trip: only
 * while the row is in one of `states` (the token rule's, instance-access.ts) for the token's
 * scale set and create attempt, with the claim of whichever of `writes` holds its runner id.
 * `recorded` says whether one did.
 */
export async function readAndRecordSystemInfo(
  db: D1Database,
  token: TokenSubject,
  states: { status: InstanceStatus; runnerStatus: RunnerStatus }[],
  info: SystemInfo,
  writes: SystemInfoWrite[],
  at: number,
): Promise<{ instance: InstanceSummary | null; recorded: boolean }> {
  const usable = JSON.stringify(states.map((s) => [s.status, s.runnerStatus]));
  const [found, ...written] = await db.batch<Record<string, any>>([
    findInstanceStatement(db, token.name, { withJitConfig: false }),
    ...writes.map((w) =>
      db
        .prepare(
          `UPDATE instances SET os_name = coalesce(?1, os_name), os_version = coalesce(?2, os_version),
                  reported_agent_id = coalesce(?3, reported_agent_id), updated_at = ?4
            WHERE name = ?5 AND scale_set_id = ?6 AND create_attempt = ?7
              AND EXISTS (SELECT 1 FROM json_each(?8) WHERE json_extract(value, '$[0]') = status AND json_extract(value, '$[1]') = runner_status)
              AND (?9 = 0 OR agent_id IS ?10)`,
        )
        .bind(
          info.osName,
          info.osVersion,
          w.reportedAgentId,
          at,
          token.name,
          token.scaleSetId,
          token.createAttempt,
          usable,
          w.agentId === undefined ? 0 : 1,
          w.agentId ?? null,
        ),
    ),
  ]);
  return {
    instance: instanceFromRow(found!.results[0], { withJitConfig: false }),
    recorded: written.some((w) => Boolean(w.meta.changes)),
  };
}
