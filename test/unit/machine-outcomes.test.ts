import { describe, expect, it } from "vitest";
import {
  callbackResult,
  createOutcome,
  deleteOutcome,
  faultOf,
  machineChange,
  nextDeleteRetry,
  operationOutcome,
  pollOutcome,
} from "../../src/scaleset/machine-outcomes";
import type { MachineInfo, PortError } from "../../src/scaleset/ports";

const NOW = 1_000_000;
const DONE = { opId: null, opKind: null, pollAt: null };
const machine = (over: Partial<MachineInfo> = {}): MachineInfo => ({ provider_id: "i-1", name: "er-1", status: "running", ...over });
const failure = (kind: PortError["kind"], status?: number): { ok: false; error: PortError } => ({
  ok: false,
  error: { kind, message: "boom", ...(status === undefined ? {} : { status }) },
});

describe("faultOf", () => {
  it("writes kind, status and message, at most 2000 characters", () => {
    expect(faultOf({ kind: "retryable", status: 503, message: "down" })).toBe("retryable (503): down");
    expect(faultOf({ kind: "permanent", message: "no" })).toBe("permanent: no");
    expect(faultOf({ kind: "malformed", message: "x".repeat(5000) })).toHaveLength(2000);
  });
});

describe("nextDeleteRetry", () => {
  it("counts the attempt and doubles the wait from 1 s", () => {
    expect(nextDeleteRetry(0, NOW)).toEqual({
      ops: { deleteAttempts: 1, retryAt: NOW + 1_000 },
      deleteRetry: { attempt: 1, delayMs: 1_000 },
    });
    expect(nextDeleteRetry(3, NOW).deleteRetry).toEqual({ attempt: 4, delayMs: 8_000 });
  });
});

describe("machineChange", () => {
  it("maps the machine's status and keeps only the fields the shim gave", () => {
    const m = machine({ status: "stopped", addresses: [{ address: "10.0.0.1", type: "private" }], os_name: "ubuntu", os_type: null });
    expect(machineChange("id", "creating", m, NOW, "why")).toEqual({
      id: "id",
      from: "creating",
      to: "stopped",
      reason: "why",
      at: NOW,
      set: { providerId: "i-1", addresses: [{ address: "10.0.0.1", type: "private" }], osName: "ubuntu" },
    });
  });

  it("says the provider reported an error, with its fault", () => {
    expect(machineChange("id", "running", machine({ status: "error", provider_fault: "YmFk" }), NOW, "why")).toMatchObject({
      to: "error",
      reason: "provider reported an error",
      set: { providerFault: "YmFk" },
    });
    expect(machineChange("id", "running", machine({ status: "unknown" }), NOW, "why").to).toBe("unknown");
  });
});

describe("callbackResult", () => {
  it("passes a valid machine and an error through", () => {
    expect(callbackResult({ result: machine(), error: null })).toEqual({ result: machine(), error: null });
    const error = { message: "quota", retryable: false };
    expect(callbackResult({ result: null, error })).toEqual({ result: null, error });
  });

  it("turns a machine GARM would reject into a fault", () => {
    const out = callbackResult({ result: { name: "er-1", status: "running" }, error: null });
    expect(out.result).toBeNull();
    expect(out.error).toMatchObject({ retryable: false, message: expect.stringMatching(/^malformed result: provider_id/) });
  });
});

describe("operationOutcome", () => {
  const creating = { id: "id", status: "creating" as const };
  const deleting = { id: "id", status: "deleting" as const };

  it("finishes a create with the machine", () => {
    const out = operationOutcome({ kind: "create", row: creating, result: machine(), error: null, deleteAttempts: 0, now: NOW });
    expect(out).toEqual({
      change: machineChange("id", "creating", machine(), NOW, "provider created the machine"),
      ops: DONE,
      create: "succeeded",
    });
  });

  it("fails a create whose machine came up in status error", () => {
    const broken = machine({ status: "error" });
    const out = operationOutcome({ kind: "create", row: creating, result: broken, error: null, deleteAttempts: 0, now: NOW });
    expect(out).toEqual({
      change: machineChange("id", "creating", broken, NOW, "provider created the machine"),
      ops: DONE,
      create: "failed",
    });
  });

  it("fails a create that errored or brought nothing, and counts it toward the backoff", () => {
    const errored = operationOutcome({
      kind: "create",
      row: creating,
      result: null,
      error: { message: "quota", retryable: false },
      deleteAttempts: 0,
      now: NOW,
    });
    expect(errored).toEqual({
      change: { id: "id", from: "creating", to: "error", reason: "provider create failed", at: NOW, set: { providerFault: "quota" } },
      ops: DONE,
      create: "failed",
    });
    const empty = operationOutcome({ kind: "create", row: creating, result: null, error: null, deleteAttempts: 0, now: NOW });
    expect(empty.change?.set).toEqual({ providerFault: "no result" });
  });

  it("finishes a delete, or schedules its next try", () => {
    expect(operationOutcome({ kind: "delete", row: deleting, result: null, error: null, deleteAttempts: 0, now: NOW })).toEqual({
      change: { id: "id", from: "deleting", to: "deleted", reason: "provider deleted the machine", at: NOW },
      ops: DONE,
    });
    const failed = operationOutcome({
      kind: "delete",
      row: deleting,
      result: null,
      error: { message: "busy", retryable: true },
      deleteAttempts: 1,
      now: NOW,
    });
    expect(failed).toEqual({
      change: {
        id: "id",
        from: "deleting",
        to: "pending_delete",
        reason: "delete failed (attempt 2)",
        at: NOW,
        set: { providerFault: "busy" },
      },
      ops: { ...DONE, deleteAttempts: 2, retryAt: NOW + 2_000 },
      deleteRetry: { attempt: 2, delayMs: 2_000 },
    });
  });

  it("only ends the operation when the instance moved on meanwhile", () => {
    const moved = { id: "id", status: "pending_delete" as const };
    expect(operationOutcome({ kind: "create", row: moved, result: machine(), error: null, deleteAttempts: 0, now: NOW })).toEqual({
      change: null,
      ops: DONE,
    });
    expect(operationOutcome({ kind: "delete", row: moved, result: null, error: null, deleteAttempts: 0, now: NOW })).toEqual({
      change: null,
      ops: DONE,
    });
  });
});

describe("pollOutcome", () => {
  const ASK_AGAIN = 60_000;

  it("asks again later when the shim could not be asked", () => {
    expect(pollOutcome({ id: "id", status: "creating" }, "create", failure("retryable", 503), NOW, ASK_AGAIN)).toEqual({
      change: null,
      ops: { pollAt: NOW + ASK_AGAIN },
    });
  });

  it("closes a delete whose machine is gone, and deletes again one that still exists", () => {
    expect(pollOutcome({ id: "id", status: "deleting" }, "delete", failure("not_found", 404), NOW, ASK_AGAIN)).toEqual({
      change: { id: "id", from: "deleting", to: "deleted", reason: "provider no longer has the machine", at: NOW },
      ops: DONE,
    });
    // A row left `deleting` by a crash has no operation recorded: its status says what it was.
    expect(pollOutcome({ id: "id", status: "deleting" }, null, { ok: true, value: machine() }, NOW, ASK_AGAIN).change).toMatchObject({
      to: "pending_delete",
      reason: "machine still exists; deleting again",
    });
  });

  it("replaces an interrupted create, fails one the provider never made, and takes the machine otherwise", () => {
    expect(pollOutcome({ id: "id", status: "pending_create" }, null, { ok: true, value: machine() }, NOW, ASK_AGAIN).change).toMatchObject({
      from: "pending_create",
      to: "error",
      reason: "create was interrupted",
    });
    expect(pollOutcome({ id: "id", status: "creating" }, "create", failure("not_found", 404), NOW, ASK_AGAIN).change).toMatchObject({
      to: "error",
      reason: "provider never created the machine",
    });
    expect(pollOutcome({ id: "id", status: "creating" }, "create", { ok: true, value: machine() }, NOW, ASK_AGAIN)).toEqual({
      change: machineChange("id", "creating", machine(), NOW, "provider reports the machine"),
      ops: DONE,
      create: "succeeded",
    });
  });

  it("waits for a create a kill cut off until it may have landed, then adopts its machine or gives the row up", () => {
    const row = { id: "id", status: "creating" as const };
    const until = NOW + 20_000;
    // Not found yet, while the shim may still be making it: ask again, no later than the deadline.
    expect(pollOutcome(row, null, failure("not_found", 404), NOW, ASK_AGAIN, until)).toEqual({
      change: null,
      ops: { pollAt: Math.min(until, NOW + ASK_AGAIN) },
    });
    expect(pollOutcome(row, null, failure("not_found", 404), until - 1, ASK_AGAIN, until).ops).toEqual({ pollAt: until });
    // It landed: the machine, by its name, is this row's (no second one is made).
    expect(pollOutcome(row, null, { ok: true, value: machine() }, NOW, ASK_AGAIN, until).change).toMatchObject({
      from: "creating",
      to: "running",
    });
    // Past the deadline, not found means never made.
    expect(pollOutcome(row, null, failure("not_found", 404), until, ASK_AGAIN, until).change).toMatchObject({
      to: "error",
      reason: "provider never created the machine",
    });
    // An awaited operation of ours (the shim accepted it) is judged as before.
    expect(pollOutcome(row, "create", failure("not_found", 404), NOW, ASK_AGAIN, until).change).toMatchObject({ to: "error" });
  });

  it("gives a verdict on an awaited create only: a machine never made or in error is a failed create", () => {
    expect(pollOutcome({ id: "id", status: "creating" }, "create", failure("not_found", 404), NOW, ASK_AGAIN).create).toBe("failed");
    expect(
      pollOutcome({ id: "id", status: "creating" }, "create", { ok: true, value: machine({ status: "error" }) }, NOW, ASK_AGAIN).create,
    ).toBe("failed");
    expect(pollOutcome({ id: "id", status: "pending_create" }, null, failure("not_found", 404), NOW, ASK_AGAIN).create).toBeUndefined();
    expect(pollOutcome({ id: "id", status: "running" }, "create", { ok: true, value: machine() }, NOW, ASK_AGAIN).create).toBeUndefined();
  });
});

describe("createOutcome", () => {
  it("fails the instance with the fault and counts a failure", () => {
    expect(createOutcome("id", failure("permanent", 400), NOW, 120_000)).toEqual({
      change: {
        id: "id",
        from: "creating",
        to: "error",
        reason: "provider create failed",
        at: NOW,
        set: { providerFault: "permanent (400): boom" },
      },
      create: "failed",
    });
  });

  it("awaits an accepted create, polling if no callback comes", () => {
    expect(createOutcome("id", { ok: true, value: { state: "accepted", operationId: "op-1" } }, NOW, 120_000)).toEqual({
      change: null,
      ops: { opId: "op-1", opKind: "create", pollAt: NOW + 120_000 },
    });
  });

  it("counts a machine made at once in status error as a failed create", () => {
    const broken = machine({ status: "error" });
    expect(createOutcome("id", { ok: true, value: { state: "done", instance: broken } }, NOW, 120_000)).toEqual({
      change: machineChange("id", "creating", broken, NOW, "provider created the machine"),
      create: "failed",
    });
  });

  it("takes a machine made at once", () => {
    expect(createOutcome("id", { ok: true, value: { state: "done", instance: machine() } }, NOW, 120_000)).toEqual({
      change: machineChange("id", "creating", machine(), NOW, "provider created the machine"),
      create: "succeeded",
    });
  });
});

describe("deleteOutcome", () => {
  const row = { id: "id" };

  it("awaits an accepted delete and drops any retry", () => {
    expect(deleteOutcome(row, false, { ok: true, value: { state: "accepted", operationId: "op-2" } }, 0, NOW, 120_000)).toEqual({
      change: null,
      ops: { opId: "op-2", opKind: "delete", pollAt: NOW + 120_000, retryAt: null },
    });
  });

  it("closes a finished delete, and a forced one past the provider's error", () => {
    expect(deleteOutcome(row, false, { ok: true, value: { state: "done" } }, 0, NOW, 120_000)).toEqual({
      change: { id: "id", from: "deleting", to: "deleted", reason: "provider deleted the machine", at: NOW },
    });
    expect(deleteOutcome(row, true, failure("retryable", 500), 0, NOW, 120_000).change).toMatchObject({
      to: "deleted",
      reason: "forced past provider error: retryable (500): boom",
    });
  });

  it("sends a failed delete back with its next try scheduled", () => {
    expect(deleteOutcome(row, false, failure("retryable", 500), 2, NOW, 120_000)).toEqual({
      change: {
        id: "id",
        from: "deleting",
        to: "pending_delete",
        reason: "delete failed (attempt 3)",
        at: NOW,
        set: { providerFault: "retryable (500): boom" },
      },
      ops: { deleteAttempts: 3, retryAt: NOW + 4_000 },
      deleteRetry: { attempt: 3, delayMs: 4_000 },
    });
  });
});
