import type { InstanceRecord, ScaleSetRecord } from "../../db/scaleset/snapshot-store";
import type { CreateBackoff } from "../backoff";
import { lifetimePolicy } from "../guards/lifetime-watchdog";
import type { InstanceOps } from "../object/object-state";
import type { PlanSnapshot } from "../reconcile";
import type { ScaleSetSettings } from "../settings";

/**
 * The planner's view of a scale set: its D1 snapshot joined with the object's own state (the
 * operations it awaits, the retries it has scheduled, what it has under way right now).
 */
export function planSnapshot(input: {
  scaleSet: ScaleSetRecord;
  instances: readonly InstanceRecord[];
  queuedJobs: number;
  /** A shaped scale set: its servable queued jobs' shape identities, oldest first (scaleset/shaped-queue.ts). */
  queuedShapes?: readonly string[];
  ops: ReadonlyMap<string, InstanceOps>;
  inFlight: ReadonlySet<string>;
  createBackoff: CreateBackoff;
  settings: ScaleSetSettings;
  /** The min idle to plan with now (scaleset/schedule); the scale set's own when not given. */
  minIdleRunners?: number;
  /** When this object incarnation started (see PlanConfig.startedAt). */
  startedAt: number;
  /** The spend guard holds (scaleset/guards/spend-guard.ts): no creates. */
  spendCapReached?: boolean;
  now: number;
}): PlanSnapshot {
  const { scaleSet: ss, settings, now } = input;
  return {
    config: {
      enabled: ss.enabled,
      minIdleRunners: input.minIdleRunners ?? ss.minIdleRunners,
      maxRunners: ss.maxRunners,
      bootstrapTimeoutMs: ss.bootstrapTimeout * 60_000,
      scaleDownIdleMs: settings.scaleDownIdleMs,
      operationPollMs: settings.operationPollMs,
      stuckGraceMs: settings.stuckGraceMs,
      startedAt: input.startedAt,
      createBackoff: settings.createBackoff,
      lifetime: lifetimePolicy(ss.maxRunnerLifetimeSeconds, ss.runnerLifetimeHardCapSeconds),
      ...(ss.shape && { shaped: true }),
    },
    instances: input.instances.map((instance) => {
      const ops = input.ops.get(instance.name);
      return {
        name: instance.name,
        status: instance.status,
        runnerStatus: instance.runnerStatus,
        createdAt: instance.createdAt,
        bootstrapSince: instance.jitAskedAt ?? instance.createdAt,
        statusChangedAt: instance.statusChangedAt,
        idleSince: instance.runnerStatus === "idle" ? (instance.runnerStatusChangedAt ?? instance.statusChangedAt) : null,
        jobStatus: instance.jobStatus,
        hadJob: instance.jobId !== null,
        retryAt: ops?.retryAt ?? null,
        inFlight: input.inFlight.has(instance.name),
        awaiting: ops?.opId && ops.opKind ? { kind: ops.opKind, pollAt: ops.pollAt ?? now } : null,
        ...(instance.shape && { shape: instance.shape.identity }),
      };
    }),
    queuedJobs: input.queuedJobs,
    ...(input.queuedShapes && { queuedShapes: input.queuedShapes }),
    createBackoff: input.createBackoff,
    spendCapReached: input.spendCapReached ?? false,
    now,
  };
}
