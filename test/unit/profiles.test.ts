import { describe, expect, it } from "vitest";
import { JIT_PER_MINUTE, profileFromArgs, stackProfile } from "../../e2e/profiles";

describe("benchmark and e2e profiles", () => {
  it("production: GitHub's latency and published secondary limits, 1 s shim creates, six outbound calls per object, the GitHub budget", () => {
    const p = stackProfile("production");
    expect(p.vars).toEqual({ OUTBOUND_CONNECTIONS_PER_OBJECT: "6", GITHUB_POINTS_PER_MINUTE: "810" });
    expect(p.github).toEqual({
      latency: { jit_ms: 300, other_ms: 100, jitter: 0.2 },
      secondary: { points_per_minute: 900, mutation_points: 5, read_points: 1, max_concurrent: 100 },
    });
    expect(p.shimFaults).toEqual({ latency_ms: { create: 1000 } });
    expect(stackProfile("production", "async").shimFaults!.rules![0]).toMatchObject({
      operation: "create",
      probability: 1,
      action: { type: "async", complete_after_ms: 1000, callback: "deliver" },
    });
    expect(JIT_PER_MINUTE).toBe(180);
    // Machines boot in ~20 s, each drawing its delay within ± 10 %.
    expect(p.sim).toEqual({ boot_delay_ms: 20_000, boot_jitter: 0.1 });
  });

  it("loopback changes nothing (but can still make creates async), its machines boot at once", () => {
    expect(stackProfile()).toEqual({
      name: "loopback",
      shim: "sync",
      vars: {},
      github: null,
      shimFaults: null,
      shimBatchMax: null,
      sim: { boot_delay_ms: 0 },
    });
    expect(stackProfile("loopback", "async").shimFaults!.rules).toHaveLength(1);
  });

  it("takes --profile and --shim out of the arguments and refuses unknown values", () => {
    const { profile, rest } = profileFromArgs(["--jobs", "200", "--profile", "production", "--shim", "async", "B"]);
    expect([profile.name, profile.shim, rest]).toEqual(["production", "async", ["--jobs", "200", "B"]]);
    expect(profileFromArgs([]).profile.name).toBe("loopback");
    expect(() => profileFromArgs(["--profile", "prod"])).toThrow(/loopback or production/);
    expect(() => profileFromArgs(["--shim", "maybe"])).toThrow(/sync or async/);
    expect(profileFromArgs(["--shim-batch", "0"]).profile.shimBatchMax).toBe(0);
    expect(profileFromArgs(["--shim-batch", "50"]).profile.shimBatchMax).toBe(50);
    expect(() => profileFromArgs(["--shim-batch", "-1"])).toThrow(/whole number/);
  });
});
