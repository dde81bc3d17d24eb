import type { InstanceStatus, RunnerStatus } from "../db/runner/schema";
import type { ShimCallback } from "../providers/shim-protocol";
import type { ScaleSetStatus } from "./object/status-types";

/**
 * What the rest of the Worker may ask of a scale set's object (scaleset-object.ts implements it),
 * so that env.ts types the SCALE_SET binding without importing the class, which reaches most of
 * src/. Everything here, and everything it imports, must stay clear of Env: that is what keeps
 * env.ts out of import circles (npm run imports).
 */
export interface ScaleSetRpc extends Rpc.DurableObjectBranded {
  /** Something changed (a job arrived, the scale set was edited): reconcile as soon as possible. */
  nudge(scaleSetId: string): Promise<void>;
  /** Reconciles now and reports how it went. */
  reconcileNow(scaleSetId: string): Promise<ScaleSetStatus>;
  status(scaleSetId: string): Promise<ScaleSetStatus>;
  /** Lifts the create backoff and the hard limit. */
  resetBackoff(scaleSetId: string): Promise<ScaleSetStatus>;
  /** Sends an instance to deletion; `force` ignores provider errors. Answers the status it moved to. */
  deleteInstance(scaleSetId: string, name: string, force: boolean): Promise<{ status: InstanceStatus } | { error: string }>;
  /** A shim finished an asynchronous operation. */
  providerCallback(cb: ShimCallback): Promise<{ accepted: boolean; reason?: string }>;
  /** A runner reports on its bootstrap; the route checked only the token, the object checks the instance. */
  runnerReport(scaleSetId: string, name: string, createAttempt: number, report: RunnerReport): Promise<{ ok: true } | RunnerReportRefusal>;
  /** Takes the scale set API listener's next step now, ignoring its backoff (tests, operators); then reconciles. */
  listenNow(scaleSetId: string): Promise<ScaleSetStatus>;
  /** Polls Forgejo for waiting jobs now, ignoring the poller's backoff (tests, operators); then reconciles if jobs came or went. */
  pollNow(scaleSetId: string): Promise<ScaleSetStatus>;
}

/** What a bootstrapping runner reports through the callback routes. */
export interface RunnerReport {
  status: RunnerStatus;
  message: string;
  agentId: number | null;
}

export type RunnerReportRefusal =
  /** The token may not be used (runner/instance-access.ts): answered as any refused instance token is. */
  { error: "unauthorized"; reason: string } | { error: "gone" } | { error: "forbidden"; from: RunnerStatus; to: RunnerStatus };
