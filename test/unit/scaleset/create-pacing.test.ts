import { describe, expect, it } from "vitest";
import {
  BOOT_SAMPLES_KEPT,
  bootLead,
  DEFAULT_BOOT_LEAD_MS,
  type MachineBoot,
  NO_BOOT_SAMPLES,
  paceCreates,
  takeBootSamples,
} from "../../../src/scaleset/jit/create-pacing";

const NOW = 1_000_000;
// One credential at the default budget: 8 JIT configs per 3 s window.
const RATE = 8 / 3;
const GAP = 1000 / RATE;
const LEAD = 20_000;
const SLACK = 3_000;

const pace = (unminted: MachineBoot[], wanted: number, over: Partial<Parameters<typeof paceCreates>[0]> = {}) =>
  paceCreates({ now: NOW, unminted, ratePerSecond: RATE, leadMs: LEAD, slackMs: SLACK, wanted, ...over });

describe("on-boot creates paced to the budget", () => {
  it("creates a lone job's machine at once", () => {
    expect(pace([], 1)).toEqual({ allowed: 1, nextAt: null, lineClearsAt: null });
  });

  it("lets a burst's first step through (what the budget mints in the slack) and says when the next may go", () => {
    const d = pace([], 1000);
    expect(d.allowed).toBe(Math.floor(SLACK / GAP) + 1);
    expect(d.nextAt).toBeGreaterThan(NOW);
    expect(d.nextAt).toBeLessThanOrEqual(NOW + GAP + 1);
  });

  it("creates nothing more while the machines already created will keep the budget busy past one boot time", () => {
    // 100 machines booted and asking: the line needs 100 gaps (37.5 s) to serve them.
    const waiting = Array.from({ length: 100 }, () => ({ createdAt: NOW - 25_000, bootedAt: NOW - 2_000 }));
    const d = pace(waiting, 50);
    expect(d.allowed).toBe(0);
    expect(d.lineClearsAt).toBeCloseTo(NOW + 99 * GAP, 0);
    // The next may go once the line's end is within a boot time and the slack.
    expect(d.nextAt).toBe(Math.ceil(NOW + 100 * GAP - LEAD - SLACK));
  });

  it("counts a machine still booting from when it will ask: creates flow at the minting rate", () => {
    // Machines created at the rate over the last boot time, none booted yet: the line is as full as it should be.
    const booting = Array.from({ length: 53 }, (_, i) => ({ createdAt: NOW - LEAD + (i + 1) * GAP, bootedAt: null }));
    const d = pace(booting, 500);
    // The last of them asks at now + 53 gaps; the next create is minted a gap after it, within the slack.
    const first = Math.max(NOW + LEAD, NOW + 54 * GAP);
    expect(d.allowed).toBe(Math.floor((NOW + LEAD + SLACK - first) / GAP) + 1);
    expect(d.allowed).toBeGreaterThan(5);
    expect(pace([...booting, ...booting], 500).allowed).toBe(0);
  });

  it("does not pace when no rate is known (no budget, no usable credential)", () => {
    expect(pace([], 700, { ratePerSecond: 0 })).toEqual({ allowed: 700, nextAt: null, lineClearsAt: null });
  });

  // A burst played out: passes every SLACK; each machine boots LEAD after its create and asks;
  // the budget mints one every GAP, in order of asking. Against every machine created at once.
  function playBurst(jobs: number, paced: boolean, boot = (_i: number) => LEAD) {
    const machines: { createdAt: number; bootedAt: number; mintedAt: number | null }[] = [];
    let mintFree = 0;
    for (let t = 0; machines.length < jobs || machines.some((m) => m.mintedAt === null); t += 100) {
      if (t % SLACK === 0 && machines.length < jobs) {
        const unminted = machines
          .filter((m) => m.mintedAt === null)
          .map((m) => ({ createdAt: m.createdAt, bootedAt: m.bootedAt <= t ? m.bootedAt : null }));
        const wanted = jobs - machines.length;
        const allowed = paced
          ? paceCreates({ now: t, unminted, ratePerSecond: RATE, leadMs: LEAD, slackMs: SLACK, wanted }).allowed
          : wanted;
        for (let k = 0; k < allowed; k++) machines.push({ createdAt: t, bootedAt: t + boot(machines.length), mintedAt: null });
      }
      // The line, in order of asking: each mint a gap after the last, never before its machine asked.
      for (const m of machines.filter((m) => m.mintedAt === null && m.bootedAt <= t).sort((a, b) => a.bootedAt - b.bootedAt)) {
        const at = Math.max(mintFree, m.bootedAt);
        if (at > t) break;
        m.mintedAt = at;
        mintFree = at + GAP;
      }
    }
    const waited = machines.reduce((s, m) => s + (m.mintedAt! - m.bootedAt), 0);
    const alive = machines.reduce((s, m) => s + (m.mintedAt! - m.createdAt), 0);
    return { lastMint: Math.max(...machines.map((m) => m.mintedAt!)), waitingShare: waited / alive };
  }

  it("in a burst the budget cannot serve at once: machines barely wait, and the last is configured no later", () => {
    for (const jobs of [250, 1000]) {
      const allAtOnce = playBurst(jobs, false);
      const paced = playBurst(jobs, true);
      expect(allAtOnce.waitingShare).toBeGreaterThan(0.5);
      expect(paced.waitingShare).toBeLessThan(0.1);
      expect(paced.lastMint).toBeLessThanOrEqual(allAtOnce.lastMint + SLACK);
    }
  });

  it("holds with boots that vary (±20 %) around the lead", () => {
    const jitter = (i: number) => LEAD * (0.8 + 0.4 * ((i * 7919) % 100) * 0.01);
    const allAtOnce = playBurst(250, false, jitter);
    const paced = playBurst(250, true, jitter);
    expect(paced.waitingShare).toBeLessThan(0.15);
    expect(paced.lastMint).toBeLessThanOrEqual(allAtOnce.lastMint + SLACK + 0.2 * LEAD);
  });
});

describe("the boot time creates are led by", () => {
  const boot = (createdAt: number, bootedAt: number | null): MachineBoot => ({ createdAt, bootedAt });

  it("learns from each machine once, newest last, keeping the last few", () => {
    const first = takeBootSamples(NO_BOOT_SAMPLES, [boot(0, 20_000), boot(1_000, 22_000), boot(5_000, null)]);
    expect(first).toEqual({ ms: [20_000, 21_000], takenUpTo: 22_000 });
    // The same machines again add nothing (the same object back: nothing to store).
    expect(takeBootSamples(first, [boot(0, 20_000), boot(1_000, 22_000)])).toBe(first);
    const many = Array.from({ length: 80 }, (_, i) => boot(i * 1000, 30_000 + i * 1000));
    expect(takeBootSamples(first, many).ms).toHaveLength(BOOT_SAMPLES_KEPT);
  });

  it("plans with the setting, else the p90 of recent boots, else the default", () => {
    const samples = { ms: [10, 20, 30, 40, 50, 60, 70, 80, 90, 100].map((s) => s * 1000), takenUpTo: 1 };
    expect(bootLead(null, samples)).toEqual({ ms: 90_000, source: "observed", samples: 10 });
    expect(bootLead(45, samples)).toEqual({ ms: 45_000, source: "setting", samples: 10 });
    expect(bootLead(null, { ms: [5_000, 6_000], takenUpTo: 1 })).toEqual({ ms: DEFAULT_BOOT_LEAD_MS, source: "default", samples: 2 });
  });
});
