import type { PlanConfig, PlanInstance } from "../../src/scaleset/reconcile";

const MIN = 60_000;

/** A scale set's planner settings as the tests start from: min idle 0, max 10, the usual timeouts. */
export const planConfig = (over: Partial<PlanConfig> = {}): PlanConfig => ({
  enabled: true,
  minIdleRunners: 0,
  maxRunners: 10,
  bootstrapTimeoutMs: 20 * MIN,
  scaleDownIdleMs: 5 * MIN,
  operationPollMs: 2 * MIN,
  stuckGraceMs: 2 * MIN,
  createBackoff: { intervalMs: 10_000, hardLimit: 5 },
  ...over,
});

let n = 0;
/** A running instance with an idle runner, created and idle since `since` (each one named anew). */
export const planInstance = (since: number, over: Partial<PlanInstance> = {}): PlanInstance => ({
  name: `r-${++n}`,
  status: "running",
  runnerStatus: "idle",
  createdAt: since,
  statusChangedAt: since,
  idleSince: since,
  jobStatus: null,
  retryAt: null,
  inFlight: false,
  awaiting: null,
  ...over,
});
