import { describe, expect, it } from "vitest";
import { githubCallLevel, passLevel, runnerStatusLevel, shimCallLevel, transitionLevel } from "../../src/scaleset/log-levels";

describe("which lifecycle lines are written at info", () => {
  it("keeps a runner's create, its end and every failure at info; the steps that announce a shim call are debug", () => {
    expect(transitionLevel("pending_create", "creating")).toBe("debug");
    expect(transitionLevel("pending_delete", "deleting")).toBe("debug");
    expect(transitionLevel("pending_force_delete", "deleting")).toBe("debug");
    for (const [from, to] of [
      ["creating", "running"],
      ["pending_create", "error"],
      ["creating", "error"],
      ["running", "pending_delete"],
      ["running", "pending_force_delete"],
      ["deleting", "deleted"],
      ["deleting", "pending_delete"],
      ["pending_delete", "running"],
    ] as const) {
      expect(transitionLevel(from, to), `${from} → ${to}`).toBe("info");
    }
  });

  it("writes bootstrap progress at debug, a runner up, failed or gone at info", () => {
    expect(runnerStatusLevel("pending")).toBe("debug");
    expect(runnerStatusLevel("installing")).toBe("debug");
    for (const s of ["idle", "failed", "active", "terminated", "offline", "online", "unknown"] as const)
      expect(runnerStatusLevel(s)).toBe("info");
  });

  it("writes a pass that did nothing at debug, unless something held it back or it failed", () => {
    expect(passLevel({ actions: 0, blocked: null })).toBe("debug");
    expect(passLevel({ actions: 0, blocked: null, error: null })).toBe("debug");
    expect(passLevel({ actions: 2, blocked: null })).toBe("info");
    expect(passLevel({ actions: 0, blocked: "max_runners" })).toBe("info");
    expect(passLevel({ actions: 0, error: "D1 down" })).toBe("info");
  });

  it("writes a failed shim call at info, a successful one at debug", () => {
    expect(shimCallLevel(false)).toBe("info");
    expect(shimCallLevel(true)).toBe("debug");
  });

  it("writes a failed GitHub call (a rate-limit answer too) at info, a successful one at debug", () => {
    expect(githubCallLevel(false)).toBe("info");
    expect(githubCallLevel(true)).toBe("debug");
  });
});
