import { describe, expect, it } from "vitest";
import { instanceStatuses } from "../../src/db/runner/schema";
import { assertTransition, canRunnerTransition, canTransition, TransitionError } from "../../src/scaleset/instance-states";

describe("instance status transitions", () => {
  it("follow GARM's lifecycle", () => {
    expect(canTransition("pending_create", "creating")).toBe(true);
    expect(canTransition("creating", "running")).toBe(true);
    expect(canTransition("creating", "error")).toBe(true);
    expect(canTransition("error", "pending_delete")).toBe(true);
    expect(canTransition("pending_delete", "deleting")).toBe(true);
    expect(canTransition("deleting", "deleted")).toBe(true);
    expect(canTransition("deleting", "pending_delete")).toBe(true);
  });

  it("allow a force delete from everywhere alive, and nothing out of deleted", () => {
    for (const s of instanceStatuses) {
      if (s === "deleted" || s === "deleting" || s === "pending_force_delete") continue;
      expect(canTransition(s, "pending_force_delete"), s).toBe(true);
    }
    for (const s of instanceStatuses) expect(canTransition("deleted", s)).toBe(false);
  });

  it("refuse shortcuts", () => {
    expect(canTransition("pending_create", "running")).toBe(false);
    expect(canTransition("pending_delete", "deleted")).toBe(false);
    expect(canTransition("error", "running")).toBe(false);
    expect(canTransition("pending_force_delete", "pending_delete")).toBe(false);
    expect(() => assertTransition("deleted", "running")).toThrow(TransitionError);
  });
});

describe("runner status transitions", () => {
  it("follow the bootstrap and job lifecycle", () => {
    expect(canRunnerTransition("pending", "installing")).toBe(true);
    expect(canRunnerTransition("installing", "installing")).toBe(true);
    expect(canRunnerTransition("installing", "idle")).toBe(true);
    expect(canRunnerTransition("idle", "active")).toBe(true);
    expect(canRunnerTransition("active", "terminated")).toBe(true);
    expect(canRunnerTransition("failed", "idle")).toBe(false);
    expect(canRunnerTransition("idle", "installing")).toBe(false);
    expect(canRunnerTransition("terminated", "idle")).toBe(false);
  });
});
