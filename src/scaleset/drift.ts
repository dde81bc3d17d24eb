import { liveInstanceNames } from "../db/runner/instance-lookups";
import { applyStatusChanges, type StatusChange } from "../db/runner/instance-store";
import type { InstanceRecord, ScaleSetRecord } from "../db/scaleset/snapshot-store";
import { mapLimit } from "../lib/map-limit";
import { errorText, logEvent as log } from "../observability/log";
import type { ExecutorContext } from "./executor/plan-executor";
import { faultOf } from "./machine-outcomes";
import type { GithubRunnerInfo, MachineInfo, MachinePort, PortResult, RunnerPort } from "./ports";
import { openScaleSetPorts } from "./ports-factory";
import { type QueuedJob, suspectedFinished } from "./stale-jobs/stale-jobs";

/**
 * Drift: what the cloud or GitHub has that D1 does not know, and the reverse. Machines without
 * an instance are deleted; instances whose machine is gone are sent to deletion; GitHub runners
 * with the scale set's prefix that no live instance has are removed. Judged against the pass's
 * snapshot, leaving alone whatever this incarnation has an operation under way on.
 */

/** Instances in these statuses should have a machine; the others are being made or unmade. */
const SHOULD_HAVE_MACHINE = new Set(["running", "stopped", "unknown"]);

/** Machines the cloud has that no instance of the snapshot names. */
export function orphanMachines(listed: readonly MachineInfo[], known: ReadonlySet<string>, inFlight: ReadonlySet<string>): MachineInfo[] {
  return listed.filter((machine) => !known.has(machine.name) && !inFlight.has(machine.name));
}

/** Instances that should have a machine the cloud does not list (confirmed one by one before acting). */
export function unlistedInstances(
  rows: readonly InstanceRecord[],
  inCloud: ReadonlySet<string>,
  inFlight: ReadonlySet<string>,
): InstanceRecord[] {
  return rows.filter((row) => !inCloud.has(row.name) && !inFlight.has(row.name) && SHOULD_HAVE_MACHINE.has(row.status));
}

/**
 * How many drift checks in a row may fail to confirm an unlisted machine before it is taken
 * for gone: some providers answer an error, not "not found", for a machine deleted behind
 * their back, and the instance would otherwise stay `running` forever.
 */
export const UNCONFIRMED_CHECKS_BEFORE_GONE = 3;

/** Unlisted instances, by name, whose machine the provider could not confirm, with how many checks in a row failed to. */
export type Unconfirmed = Record<string, number>;

/**
 * What the provider's answers about unlisted instances mean: gone when it says not found, or
 * when it has failed to confirm the machine UNCONFIRMED_CHECKS_BEFORE_GONE checks in a row.
 * Returns the instances to force out (a delete would fail the same way) with their reasons,
 * and the failed-check counts to keep (an instance listed again or confirmed starts over).
 */
export function judgeUnlisted(
  missing: readonly InstanceRecord[],
  answers: readonly PortResult<MachineInfo>[],
  before: Unconfirmed,
): { gone: { row: InstanceRecord; reason: string; force: boolean }[]; unconfirmed: Unconfirmed } {
  const gone: { row: InstanceRecord; reason: string; force: boolean }[] = [];
  const unconfirmed: Unconfirmed = {};
  for (const [index, row] of missing.entries()) {
    const answer = answers[index]!;
    if (answer.ok) continue;
    if (answer.error.kind === "not_found") {
      gone.push({ row, reason: "machine is gone from the provider", force: false });
      continue;
    }
    const failed = (before[row.name] ?? 0) + 1;
    if (failed >= UNCONFIRMED_CHECKS_BEFORE_GONE) {
      gone.push({
        row,
        reason: `machine is not listed and the provider failed to confirm it ${failed} times: ${faultOf(answer.error)}`,
        force: true,
      });
    } else {
      unconfirmed[row.name] = failed;
    }
  }
  return { gone, unconfirmed };
}

/** GitHub runners named like this scale set's that its snapshot does not know (another scale set may still own one). */
export function strayRunners(runners: readonly GithubRunnerInfo[], runnerPrefix: string, known: ReadonlySet<string>): GithubRunnerInfo[] {
  const prefix = `${runnerPrefix}-`;
  return runners.filter((runner) => runner.name.startsWith(prefix) && !known.has(runner.name));
}

/** What a drift check leaves for the rest of the pass. */
export interface DriftFindings {
  /** Failed-confirmation counts for the next check (as they were when the cloud could not be listed). */
  unconfirmed: Unconfirmed;
  /** Running jobs whose runner GitHub shows idle or no longer has: asked about by the stale-job re-check. */
  suspects: QueuedJob[];
}

/** Compares the cloud and GitHub with D1 and removes what only one side knows. */
export async function checkDrift(input: {
  db: D1Database;
  scaleSet: ScaleSetRecord;
  rows: InstanceRecord[];
  ports: { machines: MachinePort; runners: RunnerPort };
  inFlight: ReadonlySet<string>;
  unconfirmed: Unconfirmed;
  concurrency: number;
  now: number;
}): Promise<DriftFindings> {
  const { db, scaleSet: ss, rows, inFlight, concurrency, now } = input;
  let unconfirmed = input.unconfirmed;
  const { machines, runners } = input.ports;
  const known = new Set(rows.map((row) => row.name));
  const changes: StatusChange[] = [];
  const listed = await machines.listInstances();
  if (listed.ok) {
    await mapLimit(orphanMachines(listed.value, known, inFlight), concurrency, async (machine) => {
      const deleted = await machines.deleteInstance(machine.provider_id || machine.name);
      log({ event: "orphan_machine_deleted", scale_set: ss.id, instance: machine.name, provider_id: machine.provider_id, ok: deleted.ok });
    });
    const missing = unlistedInstances(rows, new Set(listed.value.map((machine) => machine.name)), inFlight);
    const confirmed = await mapLimit(missing, concurrency, (row) => machines.getInstance(row.providerId ?? row.name));
    const judged = judgeUnlisted(missing, confirmed, unconfirmed);
    unconfirmed = judged.unconfirmed;
    for (const { row, reason, force } of judged.gone) {
      changes.push({ id: row.id, from: row.status, to: force ? "pending_force_delete" : "pending_delete", reason, at: now });
      log({ event: "machine_gone", scale_set: ss.id, instance: row.name, forced: force, reason });
    }
  } else {
    log({ event: "drift_check_failed", scale_set: ss.id, error: faultOf(listed.error) });
  }
  let suspects: QueuedJob[] = [];
  try {
    const listedRunners = await runners.listRunners();
    suspects = suspectedFinished(
      rows.filter((row) => !inFlight.has(row.name)),
      listedRunners,
    );
    const candidates = strayRunners(listedRunners, ss.runnerPrefix, known);
    if (candidates.length) {
      // A runner is ours to remove only if no scale set has a live instance by that name.
      const live = await liveInstanceNames(
        db,
        candidates.map((runner) => runner.name),
      );
      await mapLimit(
        candidates.filter((runner) => !live.has(runner.name) && !runner.busy),
        concurrency,
        async (runner) => {
          const result = await runners.removeRunner(runner.id).catch((err) => `error: ${errorText(err)}`);
          log({ event: "orphan_runner_removed", scale_set: ss.id, instance: runner.name, runner_id: runner.id, result });
        },
      );
    }
  } catch (err) {
    log({ event: "drift_check_failed", scale_set: ss.id, error: `github: ${errorText(err)}` });
  }
  if (changes.length) await applyStatusChanges(db, changes);
  return { unconfirmed, suspects };
}

/**
 * The drift check when it is due (every `orphanCheckMs`), with the pass's snapshot: the new
 * unconfirmed counts are kept in the object's state. Returns the running jobs it suspects
 * finished, or null when no check was due.
 */
export async function checkDriftWhenDue(
  ctx: Pick<ExecutorContext, "env" | "state" | "settings" | "inFlight" | "outbound">,
  db: D1Database,
  scaleSet: ScaleSetRecord,
  rows: InstanceRecord[],
  now: number,
): Promise<QueuedJob[] | null> {
  if (now - ctx.state.lastOrphanCheck < ctx.settings.orphanCheckMs) return null;
  const at = Date.now();
  ctx.state.lastOrphanCheck = at;
  const ports = await openScaleSetPorts(ctx.env, scaleSet, { outbound: ctx.outbound });
  const found = await checkDrift({
    db,
    scaleSet,
    rows,
    ports,
    inFlight: ctx.inFlight,
    unconfirmed: ctx.state.unconfirmedMachines,
    concurrency: ctx.settings.concurrency,
    now: at,
  });
  ctx.state.unconfirmedMachines = found.unconfirmed;
  return found.suspects;
}
