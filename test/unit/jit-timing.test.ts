import { describe, expect, it } from "vitest";
import { DEFAULT_JIT_WAIT_MS, onBootTiming } from "../../src/scaleset/jit/jit-on-boot";
import { mintsJitOnBoot, tokenMinutes } from "../../src/scaleset/runner/bootstrap";

describe("mintsJitOnBoot", () => {
  it("mints on boot only for JIT webhook scale sets that ask for it", () => {
    const base = { jitConfigEnabled: true, jitConfigTiming: "on_boot", intake: "webhook" } as const;
    expect(mintsJitOnBoot(base)).toBe(true);
    expect(mintsJitOnBoot({ ...base, jitConfigTiming: "before_create" })).toBe(false);
    // The scale set API's JIT comes from its own endpoint, through the object.
    expect(mintsJitOnBoot({ ...base, intake: "scaleset_api" })).toBe(false);
    // Registration tokens: nothing to mint.
    expect(mintsJitOnBoot({ ...base, jitConfigEnabled: false })).toBe(false);
  });
});

describe("tokenMinutes", () => {
  it("gives a machine that may wait in line for its JIT config two bootstrap timeouts", () => {
    const ss = { bootstrapTimeout: 20, jitConfigEnabled: true, jitConfigTiming: "on_boot", intake: "webhook" } as const;
    expect(tokenMinutes(ss)).toBe(40);
    expect(tokenMinutes({ ...ss, jitConfigTiming: "before_create" })).toBe(20);
    expect(tokenMinutes({ ...ss, jitConfigEnabled: false })).toBe(20);
  });
});

describe("onBootTiming", () => {
  it("waits 90 s in line by default, JIT_WAIT_SECONDS when it is a number of seconds", () => {
    expect(DEFAULT_JIT_WAIT_MS).toBe(90_000);
    expect(onBootTiming({}).maxWaitMs).toBe(90_000);
    expect(onBootTiming({ JIT_WAIT_SECONDS: "" }).maxWaitMs).toBe(90_000);
    expect(onBootTiming({ JIT_WAIT_SECONDS: "soon" }).maxWaitMs).toBe(90_000);
    expect(onBootTiming({ JIT_WAIT_SECONDS: "-1" }).maxWaitMs).toBe(90_000);
    expect(onBootTiming({ JIT_WAIT_SECONDS: "0" }).maxWaitMs).toBe(0);
    expect(onBootTiming({ JIT_WAIT_SECONDS: "30" }).maxWaitMs).toBe(30_000);
  });
});
