import type { StatusChange } from "../db/runner/instance-store";
import type { InstanceStatus } from "../db/runner/schema";
import { type ShimCallback, validateProviderInstance } from "../providers/shim-protocol";
import { deleteRetryDelay } from "./backoff";
import type { InstanceOps } from "./object/object-state";
import type { MachineCreated, MachineDeleted, MachineInfo, PortError, PortResult } from "./ports";

/**
 * How a provider's answers become instance status changes: the answer to a create or a delete,
 * an async operation's result (callback), a poll of a machine. Pure: each function returns the
 * change to write and what becomes of the instance's pending operation; the scale set object
 * writes both and keeps the create backoff.
 */

/** Changes to an instance's operation state; absent fields keep their value. */
export type OpsPatch = Partial<Omit<InstanceOps, "instance">>;

/** A failed delete to try again: retry number `attempt`, `delayMs` from now. */
export interface DeleteRetry {
  attempt: number;
  delayMs: number;
}

export interface Outcome {
  /** The status change to write, if any. */
  change: StatusChange | null;
  /** What becomes of the instance's operation state (absent: unchanged). */
  ops?: OpsPatch;
  /** Whether the answer ends a create, and how: it moves the scale set's create backoff. */
  create?: CreateVerdict;
  deleteRetry?: DeleteRetry;
}

/**
 * How a finished create counts for the create backoff. A machine the provider reports in
 * status `error` is a failed create, whether it came in the create's answer, an async
 * callback or a poll: GARM deletes it at once and counts the attempt as failed.
 */
export type CreateVerdict = "failed" | "succeeded";

const verdictOf = (machine: MachineInfo): CreateVerdict => (machine.status === "error" ? "failed" : "succeeded");

/** Provider faults are stored and shown; a shim's whole error page is not. */
const MAX_FAULT = 2000;

/** A port error as an instance's provider fault: kind, status, message. */
export const faultOf = (e: PortError) => `${e.kind}${e.status ? ` (${e.status})` : ""}: ${e.message}`.slice(0, MAX_FAULT);

/** The operation is over: no callback awaited, no poll due. */
const OPERATION_DONE: OpsPatch = { opId: null, opKind: null, pollAt: null };

/** The next try of a delete after `previousAttempts` failed ones (GARM's doubling delay). */
export function nextDeleteRetry(previousAttempts: number, now: number): { ops: OpsPatch; deleteRetry: DeleteRetry } {
  const attempt = previousAttempts + 1;
  const delayMs = deleteRetryDelay(attempt);
  return { ops: { deleteAttempts: attempt, retryAt: now + delayMs }, deleteRetry: { attempt, delayMs } };
}

/** A failed delete: the instance goes back to pending_delete for its retry, keeping what the provider said. */
function deleteFailedChange(id: string, attempt: number, fault: string, at: number): StatusChange {
  return { id, from: "deleting", to: "pending_delete", reason: `delete failed (attempt ${attempt})`, at, set: { providerFault: fault } };
}

/** The status a reported machine puts its instance in, with what the provider said of it. */
export function machineChange(id: string, from: InstanceStatus, machine: MachineInfo, at: number, reason: string): StatusChange {
  const to: InstanceStatus =
    machine.status === "running" ? "running" : machine.status === "stopped" ? "stopped" : machine.status === "error" ? "error" : "unknown";
  return {
    id,
    from,
    to,
    reason: to === "error" ? "provider reported an error" : reason,
    at,
    set: {
      providerId: machine.provider_id,
      ...(machine.addresses && { addresses: machine.addresses }),
      ...(machine.os_type && { osType: machine.os_type }),
      ...(machine.os_name && { osName: machine.os_name }),
      ...(machine.os_version && { osVersion: machine.os_version }),
      ...(machine.os_arch && { osArch: machine.os_arch }),
      ...(machine.provider_fault && { providerFault: machine.provider_fault }),
    },
  };
}

export type OperationError = { message: string; retryable: boolean };

/** A callback's result and error, with GARM's validity rule: a result without provider id, name or a known status is a fault, not a machine. */
export function callbackResult(cb: Pick<ShimCallback, "result" | "error">): { result: MachineInfo | null; error: OperationError | null } {
  if (!cb.result) return { result: null, error: cb.error };
  const valid = validateProviderInstance(cb.result);
  if (valid.ok) return { result: valid.value, error: cb.error };
  return { result: null, error: { message: `malformed result: ${valid.problems.join("; ")}`, retryable: false } };
}

/** What an async operation's result means for its instance (`deleteAttempts`: failed deletes so far). */
export function operationOutcome(input: {
  kind: "create" | "delete";
  row: { id: string; status: InstanceStatus };
  result: MachineInfo | null;
  error: OperationError | null;
  deleteAttempts: number;
  now: number;
}): Outcome {
  const { row, result, error, now } = input;
  if (input.kind === "create") {
    if (row.status !== "creating") return { change: null, ops: OPERATION_DONE };
    if (error || !result) {
      return {
        change: {
          id: row.id,
          from: "creating",
          to: "error",
          reason: "provider create failed",
          at: now,
          set: { providerFault: (error?.message ?? "no result").slice(0, MAX_FAULT) },
        },
        ops: OPERATION_DONE,
        create: "failed",
      };
    }
    return {
      change: machineChange(row.id, "creating", result, now, "provider created the machine"),
      ops: OPERATION_DONE,
      create: verdictOf(result),
    };
  }
  if (row.status !== "deleting") return { change: null, ops: OPERATION_DONE };
  if (error) {
    const retry = nextDeleteRetry(input.deleteAttempts, now);
    return {
      change: deleteFailedChange(row.id, retry.deleteRetry.attempt, error.message.slice(0, MAX_FAULT), now),
      ops: { ...OPERATION_DONE, ...retry.ops },
      deleteRetry: retry.deleteRetry,
    };
  }
  return { change: { id: row.id, from: "deleting", to: "deleted", reason: "provider deleted the machine", at: now }, ops: OPERATION_DONE };
}

/**
 * Resolves an overdue operation, or a row left mid-way by a crash, from what the shim says of
 * the machine. `opKind` is the operation awaited, if any; `askAgainMs` how soon to ask again
 * when the shim could not be asked.
 */
export function pollOutcome(
  row: { id: string; status: InstanceStatus },
  opKind: "create" | "delete" | null,
  answer: PortResult<MachineInfo>,
  now: number,
  askAgainMs: number,
  /**
   * For a row left `creating` with no operation of ours on record (a kill or eviction cut its
   * create off): until when the shim may still be making the machine (the create's start plus
   * the shim's timeout). Not found before then is no answer yet.
   */
  createMayLandUntil: number | null = null,
): Outcome {
  const kind = opKind ?? (row.status === "deleting" ? "delete" : "create");
  if (!answer.ok && answer.error.kind !== "not_found") return { change: null, ops: { pollAt: now + askAgainMs } };
  // The machine is the create's idempotency key (its name): the shim may still be making it for
  // the cut-off request. Giving the row up now would pay for a second machine when it lands.
  if (
    !answer.ok &&
    kind === "create" &&
    opKind === null &&
    row.status === "creating" &&
    createMayLandUntil !== null &&
    now < createMayLandUntil
  )
    return { change: null, ops: { pollAt: Math.min(createMayLandUntil, now + askAgainMs) } };
  const done = (change: StatusChange): Outcome => ({ change, ops: OPERATION_DONE });
  if (kind === "delete") {
    if (!answer.ok) return done({ id: row.id, from: row.status, to: "deleted", reason: "provider no longer has the machine", at: now });
    return done({ id: row.id, from: row.status, to: "pending_delete", reason: "machine still exists; deleting again", at: now });
  }
  if (row.status === "pending_create") {
    // Our create was cut off; whatever happened, the machine (if any) goes and a fresh one replaces it.
    return done({ id: row.id, from: "pending_create", to: "error", reason: "create was interrupted", at: now });
  }
  const outcome = answer.ok
    ? { ...done(machineChange(row.id, row.status, answer.value, now, "provider reports the machine")), create: verdictOf(answer.value) }
    : {
        ...done({ id: row.id, from: row.status, to: "error", reason: "provider never created the machine", at: now }),
        create: "failed" as const,
      };
  // Only a create still awaited ends here; a row in any other status is no verdict on a create.
  return row.status === "creating" ? outcome : { change: outcome.change, ops: outcome.ops };
}

/** What the shim's answer to a create means for the new instance (`pollMs`: when to ask if no callback comes). */
export function createOutcome(id: string, answer: PortResult<MachineCreated>, now: number, pollMs: number): Outcome {
  if (!answer.ok) {
    return {
      change: {
        id,
        from: "creating",
        to: "error",
        reason: "provider create failed",
        at: now,
        set: { providerFault: faultOf(answer.error) },
      },
      create: "failed",
    };
  }
  // Accepted is no verdict yet: the callback (or a poll) brings it.
  if (answer.value.state === "accepted")
    return { change: null, ops: { opId: answer.value.operationId, opKind: "create", pollAt: now + pollMs } };
  const { instance } = answer.value;
  return { change: machineChange(id, "creating", instance, now, "provider created the machine"), create: verdictOf(instance) };
}

/** What the shim's answer to a delete means; a forced delete goes past provider errors. */
export function deleteOutcome(
  row: { id: string },
  force: boolean,
  answer: PortResult<MachineDeleted>,
  deleteAttempts: number,
  now: number,
  pollMs: number,
): Outcome {
  if (answer.ok && answer.value.state === "accepted") {
    return { change: null, ops: { opId: answer.value.operationId, opKind: "delete", pollAt: now + pollMs, retryAt: null } };
  }
  if (answer.ok || force) {
    const reason = answer.ok ? "provider deleted the machine" : `forced past provider error: ${faultOf(answer.error)}`;
    return { change: { id: row.id, from: "deleting", to: "deleted", reason, at: now } };
  }
  const retry = nextDeleteRetry(deleteAttempts, now);
  return {
    change: deleteFailedChange(row.id, retry.deleteRetry.attempt, faultOf(answer.error), now),
    ...retry,
  };
}
