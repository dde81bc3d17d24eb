import { describe, expect, it } from "vitest";
import {
  bootedWaiting,
  configuredOverFloorPlusBoot,
  createsOutstandingPeak,
  githubFloorS,
  type MachineTimes,
  nthTime,
} from "../../bench/burst-figures.ts";

const machine = (
  created_at: number,
  booted_at: number | null,
  configured_at: number | null,
  deleted_at: number | null = null,
): MachineTimes => ({
  created_at,
  booted_at,
  configured_at,
  deleted_at,
});

describe("the production burst's figures", () => {
  it("booted-waiting share: machine time booted and waiting for a config over machine time until configured", () => {
    // Booted after 20 s: one machine got its config at once, one waited 60 s, one 20 s.
    const figures = bootedWaiting([machine(0, 20_000, 20_000), machine(0, 20_000, 80_000), machine(1_000, 21_000, 41_000)]);
    // Waiting 0 + 60 + 20 = 80 s of 20 + 80 + 40 = 140 s until configured.
    expect(figures).toEqual({
      machines_configured: 3,
      booted_waiting_share: 0.571,
      booted_waiting_machine_s: 80,
      machine_s_until_configured: 140,
      booted_wait_per_machine: { p50_s: 20, p99_s: 60, max_s: 60 },
    });
  });

  it("counts only the machines that got configured, and has no share without any", () => {
    const figures = bootedWaiting([machine(0, 20_000, 30_000), machine(0, 20_000, null, 90_000), machine(0, null, null)]);
    expect(figures.machines_configured).toBe(1);
    expect(figures.booted_waiting_share).toBe(0.333);
    expect(bootedWaiting([machine(0, null, null)])).toMatchObject({ machines_configured: 0, booted_waiting_share: null });
    expect(bootedWaiting([]).booted_wait_per_machine).toEqual({ p50_s: null, p99_s: null, max_s: null });
  });

  it("creates outstanding at the peak: created and not yet configured (or deleted unconfigured) at once", () => {
    expect(
      createsOutstandingPeak([
        machine(0, 10, 100),
        machine(10, 20, 50),
        // configured as the fourth is created: counted out first
        machine(20, 30, 60),
        machine(60, 70, 80),
        // never configured, deleted at 30: outstanding from 25 to 30
        machine(25, null, null, 30),
      ]),
    ).toBe(4);
    // Paced: each machine configured before the next is created.
    expect(createsOutstandingPeak([machine(0, 5, 10), machine(10, 15, 20), machine(20, 25, 30)])).toBe(1);
    // One neither configured nor deleted counts to the end.
    expect(createsOutstandingPeak([machine(0, null, null), machine(5, 6, 7), machine(8, 9, 10)])).toBe(2);
    expect(createsOutstandingPeak([])).toBe(0);
  });

  it("the moment by which n had happened", () => {
    expect(nthTime([30, 10, 20], 2)).toBe(20);
    expect(nthTime([30, 10, 20], 3)).toBe(30);
    expect(nthTime([30, 10], 3)).toBeNull();
    expect(nthTime([], 0)).toBeNull();
  });

  it("GitHub's floor for a pool and the configured time over floor plus one boot", () => {
    expect(githubFloorS(1000, 180, 1)).toBe(333.3);
    expect(githubFloorS(1000, 180, 3)).toBe(111.1);
    expect(githubFloorS(250, 180, 1)).toBe(83.3);
    // 1,000 jobs on 3 credentials: 111.1 s floor + 20 s boot.
    expect(configuredOverFloorPlusBoot(157.3, 111.1, 20)).toBe(1.2);
    // No REST floor (JIT configs from the Actions service): over the boot alone.
    expect(configuredOverFloorPlusBoot(30, null, 20)).toBe(1.5);
    expect(configuredOverFloorPlusBoot(null, 111.1, 20)).toBeNull();
    expect(configuredOverFloorPlusBoot(5, null, 0)).toBeNull();
  });
});
