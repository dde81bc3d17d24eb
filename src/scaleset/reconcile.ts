import type { JobStatus } from "../db/jobs/schema";
import type { InstanceStatus, RunnerStatus } from "../db/runner/schema";
import { type CreateBackoff, type CreateBackoffPolicy, createAllowedAt } from "./backoff";
import { type LifetimePolicy, NO_LIFETIME_LIMIT, overstay, overstayDeadline, type Reap } from "./guards/lifetime-watchdog";
import { isBeingDeleted, isLive } from "./instance-states";

/**
 * The reconcile planner: from what a scale set has and what it needs, the actions to take now.
 * Pure and total: no I/O, no clock but `now`, no randomness. The ScaleSet object loads a
 * snapshot, runs `plan`, and carries the actions out.
 */

export interface PlanConfig {
  enabled: boolean;
  minIdleRunners: number;
  maxRunners: number;
  bootstrapTimeoutMs: number;
  /** Idle runners beyond what is needed go only after idling this long. */
  scaleDownIdleMs: number;
  /** How long an async shim operation may run before we ask the shim ourselves. */
  operationPollMs: number;
  /** How long a pending_create/creating/deleting row may sit with no operation of ours on it. */
  stuckGraceMs: number;
  /**
   * When this object incarnation started. A row left mid-way before then cannot have an
   * operation of ours under way (the process that ran it is gone): it is resolved at once.
   */
  startedAt?: number;
  createBackoff: CreateBackoffPolicy;
  /** The lifetime watchdog (guards/lifetime-watchdog.ts); absent: machines may stay as long as they like. */
  lifetime?: LifetimePolicy;
  /**
   * A shaped scale set (src/shapes): each queued job gets a machine of its own shape, a runner
   * serves only jobs of its shape, no runner idles for min idle, and one whose shape no queued job
   * wants goes as soon as it is idle.
   */
  shaped?: boolean;
}

export interface PlanInstance {
  name: string;
  status: InstanceStatus;
  runnerStatus: RunnerStatus;
  createdAt: number;
  /**
   * Where the bootstrap timeout counts from when not the create: a machine that waited in line
   * for its on-boot JIT config (the GitHub budget) gets its whole timeout from its last ask or
   * its mint (see routes/metadata.ts), so a burst's queue does not reap machines still waiting.
   */
  bootstrapSince?: number;
  statusChangedAt: number;
  /** When the runner last became idle; null unless it is idle. */
  idleSince: number | null;
  /** Status of the job this runner serves, if any. */
  jobStatus: JobStatus | null;
  /** The instance names a job its runner took (even one whose row is gone): the watchdog's "stuck after its job". */
  hadJob?: boolean;
  /** A failed delete is retried no earlier than this. */
  retryAt: number | null;
  /** An operation started by this object incarnation is still running on it. */
  inFlight: boolean;
  /** An async shim operation (202) we are waiting on, and when to poll if no callback comes. */
  awaiting: { kind: "create" | "delete"; pollAt: number } | null;
  /** A shaped scale set's machine: the identity of the shape it was made for (JobShape.identity). */
  shape?: string | null;
}

export interface PlanSnapshot {
  config: PlanConfig;
  instances: readonly PlanInstance[];
  /** Jobs routed to this scale set that no runner has taken yet (queued or waiting). */
  queuedJobs: number;
  /** A shaped scale set: the shape identity of each queued job a machine can be made for, oldest first. */
  queuedShapes?: readonly string[];
  createBackoff: CreateBackoff;
  /** The spend guard holds (guards/spend-guard.ts): machine-hours today reached the scale set's cap. */
  spendCapReached?: boolean;
  now: number;
}

export type DeleteReason =
  | "job_completed"
  | "runner_finished"
  | "instance_error"
  | "instance_stopped"
  | "bootstrap_timeout"
  | "scale_down"
  | "max_lifetime";

export type Action =
  /** `forQueued`: a shaped scale set's creates, each one's job as its index in `queuedShapes`. */
  | { type: "create"; count: number; forQueued?: number[] }
  /** `reap`: the lifetime watchdog's verdict (reason `max_lifetime`); its `force` marks a forced delete. */
  | { type: "mark_delete"; instance: string; reason: DeleteReason; reap?: Reap }
  | { type: "delete"; instance: string; force: boolean }
  | { type: "poll"; instance: string; why: "operation_timeout" | "stuck" };

export interface PlanSummary {
  desired: number;
  live: number;
  available: number;
  idle: number;
  busy: number;
  creating: number;
  deleting: number;
  queued: number;
  /** Why nothing was created although more runners are needed, if so. */
  /** (`jit_pacing`: some were, the rest wait until their JIT configs can be minted about when their machines boot.) */
  /** (`spend_cap`: the scale set's machine-hours today reached `max_machine_hours_per_day`.) */
  /** (`flavors_unavailable`: a shaped scale set's jobs wait for the provider's flavor catalogue.) */
  blocked:
    | "disabled"
    | "max_runners"
    | "create_backoff"
    | "hard_limit"
    | "spend_cap"
    | "github_budget"
    | "jit_pacing"
    | "flavors_unavailable"
    | null;
}

export interface Plan {
  actions: Action[];
  summary: PlanSummary;
  /** The earliest time something that is waiting now becomes due; null if nothing waits. */
  wakeAt: number | null;
  /**
   * The credentials (of the entity's pool) whose GitHub budget paid for the creates' JIT configs,
   * one per runner in order (scaleset/jit/github-pacing.ts); absent: the entity's own mint them.
   */
  mintWith?: string[];
}

const BOOTSTRAPPING: readonly RunnerStatus[] = ["pending", "installing", "unknown"];
const STARTING: readonly InstanceStatus[] = ["pending_create", "creating"];

const isBusy = (i: PlanInstance) => i.runnerStatus === "active" || i.jobStatus === "in_progress";
const isIdle = (i: PlanInstance) =>
  i.status === "running" && (i.runnerStatus === "idle" || i.runnerStatus === "online") && !isBusy(i) && i.jobStatus !== "completed";

const bootstrapSince = (i: PlanInstance) => Math.max(i.createdAt, i.bootstrapSince ?? i.createdAt);

/** Why a live, not-yet-deleting instance should go, or null if it should stay. */
function deleteReason(i: PlanInstance, cfg: PlanConfig, now: number): DeleteReason | null {
  if (i.status === "error") return "instance_error";
  if (i.status === "stopped") return "instance_stopped";
  if (i.jobStatus === "completed") return "job_completed";
  if (i.runnerStatus === "terminated" || i.runnerStatus === "failed") return "runner_finished";
  const bootstrapping = STARTING.includes(i.status) || (i.status === "running" && BOOTSTRAPPING.includes(i.runnerStatus));
  if (bootstrapping && !isBusy(i) && now - bootstrapSince(i) >= cfg.bootstrapTimeoutMs) return "bootstrap_timeout";
  return null;
}

/**
 * A shaped scale set's capacity: each queued job (by shape identity, oldest first) is covered by
 * an available machine of its shape or is missing one; what is left over is each shape's surplus.
 */
function shapedCapacity(available: readonly PlanInstance[], queuedShapes: readonly string[]) {
  const spare = new Map<string, number>();
  for (const i of available) spare.set(i.shape ?? "", (spare.get(i.shape ?? "") ?? 0) + 1);
  const missing: number[] = [];
  for (const [index, shape] of queuedShapes.entries()) {
    const n = spare.get(shape) ?? 0;
    if (n > 0) spare.set(shape, n - 1);
    else missing.push(index);
  }
  return { missing, surplus: spare };
}

export function plan(snapshot: PlanSnapshot): Plan {
  const { config: cfg, now } = snapshot;
  const actions: Action[] = [];
  const touched = new Set<string>();
  let wakeAt: number | null = null;
  const wake = (t: number) => {
    if (t > now && (wakeAt === null || t < wakeAt)) wakeAt = t;
  };
  const act = (a: Action & { instance: string }) => {
    if (touched.has(a.instance)) return;
    touched.add(a.instance);
    actions.push(a);
  };

  const live = snapshot.instances.filter((i) => isLive(i.status));

  // 1. Operations we are waiting on, and rows nobody is working on (after a crash or eviction).
  for (const i of live) {
    if (i.inFlight) continue;
    if (i.awaiting) {
      if (i.awaiting.pollAt <= now) act({ type: "poll", instance: i.name, why: "operation_timeout" });
      else wake(i.awaiting.pollAt);
      continue;
    }
    if (i.status === "pending_create" || i.status === "creating" || i.status === "deleting") {
      const due = cfg.startedAt !== undefined && i.statusChangedAt < cfg.startedAt ? now : i.statusChangedAt + cfg.stuckGraceMs;
      if (due <= now) act({ type: "poll", instance: i.name, why: "stuck" });
      else wake(due);
    }
  }

  // 2. Deletions that are due (their backoff has passed).
  for (const i of live) {
    if (i.inFlight || touched.has(i.name)) continue;
    if (i.status !== "pending_delete" && i.status !== "pending_force_delete") continue;
    if (i.retryAt !== null && i.retryAt > now) {
      wake(i.retryAt);
      continue;
    }
    act({ type: "delete", instance: i.name, force: i.status === "pending_force_delete" });
  }

  // 3. Instances that should go: finished, broken, never came up, or overstayed their lifetime.
  const marked = new Set<string>();
  const lifetime = cfg.lifetime ?? NO_LIFETIME_LIMIT;
  for (const i of live) {
    if (i.inFlight || touched.has(i.name) || isBeingDeleted(i.status) || i.awaiting) continue;
    const reason = deleteReason(i, cfg, now);
    const facts = { ...i, onJob: isBusy(i), hadJob: i.hadJob ?? false };
    const reap = reason ? null : overstay(facts, lifetime, now);
    if (reason) {
      act({ type: "mark_delete", instance: i.name, reason });
      marked.add(i.name);
    } else if (reap) {
      act({ type: "mark_delete", instance: i.name, reason: "max_lifetime", reap });
      marked.add(i.name);
    } else {
      if (STARTING.includes(i.status) || BOOTSTRAPPING.includes(i.runnerStatus)) wake(bootstrapSince(i) + cfg.bootstrapTimeoutMs);
      const deadline = overstayDeadline(facts, lifetime);
      if (deadline !== null) wake(deadline);
    }
  }

  // 4. Capacity: runners that can take a job soon versus what is needed.
  const available = live.filter(
    (i) =>
      !marked.has(i.name) &&
      !isBeingDeleted(i.status) &&
      i.status !== "error" &&
      i.status !== "stopped" &&
      !isBusy(i) &&
      i.jobStatus !== "completed" &&
      i.runnerStatus !== "terminated" &&
      i.runnerStatus !== "failed",
  );
  const idle = available.filter(isIdle);
  // A disabled shaped scale set wants nothing: all its idle runners are surplus.
  const shaped = cfg.shaped ? shapedCapacity(available, cfg.enabled ? (snapshot.queuedShapes ?? []) : []) : null;
  const wanted = shaped ? (snapshot.queuedShapes ?? []).length : cfg.minIdleRunners + snapshot.queuedJobs;
  const desired = cfg.enabled ? Math.min(cfg.maxRunners, wanted) : 0;
  // A shaped scale set's machines are not interchangeable: what is missing is counted per shape.
  const missing = shaped ? shaped.missing.length : desired - available.length;

  let blocked: PlanSummary["blocked"] = null;
  if (!cfg.enabled && Math.min(cfg.maxRunners, wanted) > available.length) blocked = "disabled";
  if (missing > 0) {
    const room = cfg.maxRunners - live.length;
    const allowedAt = createAllowedAt(snapshot.createBackoff, cfg.createBackoff);
    if (allowedAt === null) blocked = "hard_limit";
    else if (allowedAt > now) {
      blocked = "create_backoff";
      wake(allowedAt);
    } else if (snapshot.spendCapReached) blocked = "spend_cap";
    else if (room <= 0) blocked = "max_runners";
    else {
      const count = Math.min(missing, room);
      actions.push(shaped ? { type: "create", count, forQueued: shaped.missing.slice(0, count) } : { type: "create", count });
    }
  }
  if (shaped) {
    // A shaped runner no queued job wants will never be wanted by another run: it goes once idle.
    const oldestFirst = idle
      .filter((i) => !i.inFlight && !touched.has(i.name) && !i.awaiting)
      .sort((a, b) => a.createdAt - b.createdAt || a.name.localeCompare(b.name));
    for (const i of oldestFirst) {
      const left = shaped.surplus.get(i.shape ?? "") ?? 0;
      if (left <= 0) continue;
      shaped.surplus.set(i.shape ?? "", left - 1);
      act({ type: "mark_delete", instance: i.name, reason: "scale_down" });
    }
  } else if (missing < 0) {
    // Surplus: only idle runners go, oldest first, and only once they have idled long enough.
    const surplus = -missing;
    const candidates = idle
      .filter((i) => !i.inFlight && !touched.has(i.name) && !i.awaiting)
      .sort((a, b) => a.createdAt - b.createdAt || a.name.localeCompare(b.name));
    let removed = 0;
    for (const i of candidates) {
      if (removed >= surplus) break;
      const idleFor = now - (i.idleSince ?? i.statusChangedAt);
      if (idleFor >= cfg.scaleDownIdleMs) {
        act({ type: "mark_delete", instance: i.name, reason: "scale_down" });
        removed++;
      } else {
        wake((i.idleSince ?? i.statusChangedAt) + cfg.scaleDownIdleMs);
      }
    }
  }

  return {
    actions,
    wakeAt,
    summary: {
      desired,
      live: live.length,
      available: available.length,
      idle: idle.length,
      busy: live.filter(isBusy).length,
      creating: live.filter((i) => STARTING.includes(i.status)).length,
      deleting: live.filter((i) => isBeingDeleted(i.status)).length,
      queued: snapshot.queuedJobs,
      blocked,
    },
  };
}

/** A create cut to its first `count` machines (a budget or an invocation's room), its jobs cut with it. */
export function trimCreate(action: Extract<Action, { type: "create" }>, count: number): Extract<Action, { type: "create" }> {
  return action.forQueued ? { type: "create", count, forQueued: action.forQueued.slice(0, count) } : { type: "create", count };
}
