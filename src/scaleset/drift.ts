import { applyStatusChanges, liveInstanceNames, type StatusChange } from "../db/instance-store";
import type { InstanceRecord, ScaleSetRecord } from "../db/scaleset-store";
import { mapLimit } from "../lib/map-limit";
import { errorText, logEvent as log } from "../observability/log";
import { faultOf } from "./machine-outcomes";
import type { GithubRunnerInfo, MachineInfo, MachinePort, RunnerPort } from "./ports";

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
export function unlistedInstances(rows: readonly InstanceRecord[], inCloud: ReadonlySet<string>, inFlight: ReadonlySet<string>): InstanceRecord[] {
  return rows.filter((row) => !inCloud.has(row.name) && !inFlight.has(row.name) && SHOULD_HAVE_MACHINE.has(row.status));
}

/** GitHub runners named like this scale set's that its snapshot does not know (another scale set may still own one). */
export function strayRunners(runners: readonly GithubRunnerInfo[], runnerPrefix: string, known: ReadonlySet<string>): GithubRunnerInfo[] {
  const prefix = `${runnerPrefix}-`;
  return runners.filter((runner) => runner.name.startsWith(prefix) && !known.has(runner.name));
}

/** Compares the cloud and GitHub with D1 and removes what only one side knows. */
export async function checkDrift(input: {
  db: D1Database;
  scaleSet: ScaleSetRecord;
  rows: InstanceRecord[];
  ports: { machines: MachinePort; runners: RunnerPort };
  inFlight: ReadonlySet<string>;
  concurrency: number;
  now: number;
}): Promise<void> {
  const { db, scaleSet: ss, rows, inFlight, concurrency, now } = input;
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
    for (const [index, row] of missing.entries()) {
      const answer = confirmed[index]!;
      if (!answer.ok && answer.error.kind === "not_found") {
        changes.push({ id: row.id, from: row.status, to: "pending_delete", reason: "machine is gone from the provider", at: now });
      }
    }
  } else {
    log({ event: "drift_check_failed", scale_set: ss.id, error: faultOf(listed.error) });
  }
  try {
    const candidates = strayRunners(await runners.listRunners(), ss.runnerPrefix, known);
    if (candidates.length) {
      // A runner is ours to remove only if no scale set has a live instance by that name.
      const live = await liveInstanceNames(db, candidates.map((runner) => runner.name));
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
}
