import type { InstanceStatus, RunnerStatus } from "../db/runner/schema";
/** debug or info: these lines are never warnings or errors of their own (a failure carries `error` at info). */
export type LifecycleLevel = "debug" | "info";

/**
 * Which lines of a runner's lifecycle are written at info (docs/observability.md "What is
 * logged at info"). At info, `wrangler tail` shows each runner once per meaningful step: its
 * machine made (or failed), its JIT config minted, it came up, it was sent to deletion (and
 * why), it is gone, and every failure. The steps in between are debug: each is followed at
 * once by a line that says more (a create's `creating` by the machine's `running` or `error`),
 * and every one of them is in D1 anyway (the instance's transitions, `GET /instances/{name}`).
 * A line costs CPU in the coordinator's isolate and a Workers Logs entry, per runner, so a
 * 1,000-runner burst paid for ~16,000 lines where ~6,000 tell the story.
 */

/** `pending_create → creating` ("calling provider") and `→ deleting` announce the shim call whose outcome the next transition logs. */
export function transitionLevel(from: InstanceStatus, to: InstanceStatus): LifecycleLevel {
  if (from === "pending_create" && to === "creating") return "debug";
  if (to === "deleting") return "debug";
  return "info";
}

/** Bootstrap progress (`installing`, each step of it) is debug; the runner coming up, failing or ending is info. */
export function runnerStatusLevel(to: RunnerStatus): LifecycleLevel {
  return to === "pending" || to === "installing" ? "debug" : "info";
}

/** A reconcile pass (`plan`) or run (`reconciled`) that did nothing, failed at nothing and was held back by nothing is debug. */
export function passLevel(pass: { actions: number; blocked?: string | null; error?: string | null }): LifecycleLevel {
  return pass.actions > 0 || (pass.blocked ?? null) !== null || (pass.error ?? null) !== null ? "info" : "debug";
}

/** A shim call that succeeded is debug: the instance's transition says what it did. A failed one is info. */
export const shimCallLevel = (ok: boolean): LifecycleLevel => (ok ? "debug" : "info");

/**
 * A GitHub call that succeeded is debug, like a shim call: the line that matters says what it
 * did (a mint's `jit_minted_on_boot`, a removal's transition), and /metrics counts every call. A
 * failed call, a rate-limit answer included, is info.
 */
export const githubCallLevel = (ok: boolean): LifecycleLevel => (ok ? "debug" : "info");
