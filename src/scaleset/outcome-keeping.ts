import type { StatusChange } from "../db/runner/instance-store";
import { logEvent as log } from "../observability/log";
import { type CreateBackoff, type CreateBackoffPolicy, recordCreateFailure, recordCreateSuccess } from "./backoff";
import type { CreateVerdict, Outcome } from "./machine-outcomes";
import type { ObjectState } from "./object/object-state";

// Keeping what a provider's answer means in the object's own state (its operations, its create
// backoff), wherever the answer came from: a pass's create or delete, a callback, a poll.

/** Writes an outcome's operation state and logs a delete backoff; returns the status change to write. */
export function keepOutcome(state: ObjectState, scaleSetId: string, instance: string, outcome: Outcome): StatusChange | null {
  if (outcome.ops) state.updateOps(instance, outcome.ops);
  if (outcome.deleteRetry) {
    log({
      event: "backoff_armed",
      scale_set: scaleSetId,
      kind: "delete",
      instance,
      attempt: outcome.deleteRetry.attempt,
      delay_ms: outcome.deleteRetry.delayMs,
    });
  }
  return outcome.change;
}

/** The create backoff after one more finished create (none: unchanged). */
export function afterCreate(
  backoff: CreateBackoff,
  verdict: CreateVerdict | undefined,
  now: number,
  policy: CreateBackoffPolicy,
): CreateBackoff {
  if (verdict === undefined) return backoff;
  return verdict === "failed" ? recordCreateFailure(backoff, now, policy) : recordCreateSuccess(backoff);
}

/**
 * Stores the create backoff `next`, wherever its creates finished (their answers, a callback,
 * a poll), and marks a newly hit hard limit with `version`, the scale set's updated_at (an
 * update after it lifts the limit). A caller without the scale set passes null: the next
 * pass records the version (see ScaleSet.pass).
 */
export function keepCreateBackoff(
  state: ObjectState,
  scaleSetId: string,
  version: number | null,
  next: CreateBackoff,
  policy: CreateBackoffPolicy,
  now: number,
): void {
  const before = state.createBackoff;
  if (next.failures === before.failures && next.lastFailureAt === before.lastFailureAt && next.hardLimitedAt === before.hardLimitedAt)
    return;
  if (next.hardLimitedAt !== null && before.hardLimitedAt === null) {
    state.hardLimitVersion = version;
    log({
      event: "hard_limit_hit",
      scale_set: scaleSetId,
      failures: next.failures,
      error: "creation stopped after too many straight failures",
    });
  } else if (next.hardLimitedAt === null && next.failures > before.failures && next.lastFailureAt !== null) {
    const allowedAt = next.lastFailureAt + next.failures * policy.intervalMs;
    log({ event: "backoff_armed", scale_set: scaleSetId, kind: "create", failures: next.failures, delay_ms: allowedAt - now });
  }
  state.createBackoff = next;
}
