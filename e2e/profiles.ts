/**
 * How the fakes and the coordinator behave in an end-to-end run or a benchmark
 * (`--profile loopback|production`, `--shim sync|async`, `--shim-batch N`: the largest batch
 * create the simulator offers, 0 for a protocol v1 shim that creates one machine per call;
 * default 100):
 *
 *  - loopback (default): everything answers at once, nothing is rate limited, the coordinator's
 *    outbound calls are not capped, the simulator's machines boot at once. Fast, and blind to
 *    the limits that shape a production burst.
 *  - production: what a burst meets when deployed (issue 14). The fake GitHub answers
 *    generate-jitconfig after ~300 ms and other calls after ~100 ms (± 20 %), and enforces its
 *    secondary limits per credential: 900 points a minute (mutations 5, reads 1) and 100
 *    concurrent requests, answering 403 + retry-after past them. The simulator takes ~1 s per
 *    create: synchronously (the call answers after 1 s) or, with `--shim async`, 202 at once and
 *    the callback after 1 s. The coordinator lets six outbound calls per scale set object wait
 *    for headers at once (OUTBOUND_CONNECTIONS_PER_OBJECT=6), as Cloudflare does, and paces its
 *    JIT configs with its GitHub budget (GITHUB_POINTS_PER_MINUTE=810, the default when deployed;
 *    the benchmark harness turns it off for loopback runs, whose fakes limit nothing). The
 *    simulator's machines boot in ~20 s (± 10 %), a cloud VM's boot to its first request (`sim`;
 *    a caller's own simulator settings win, so the e2e scenarios keep their short boots).
 */

import type { SimulatorConfig } from "../shims/simulator/simulator.ts";
import type { GithubProfile } from "../test/fake-github/types.ts";
import type { Faults } from "../test/fake-shim/types.ts";

export type ProfileName = "loopback" | "production";
export type ShimMode = "sync" | "async";

export interface StackProfile {
  name: ProfileName;
  shim: ShimMode;
  /** More coordinator vars. */
  vars: Record<string, string>;
  /** The fake GitHub world's profile (null: none). */
  github: GithubProfile | null;
  /** The simulator tenant's faults (null: none). */
  shimFaults: Faults | null;
  /** The largest batch create the simulator offers (0: none, protocol v1; null: its default). */
  shimBatchMax: number | null;
  /** The simulator's settings (its machines' boot), under the caller's own. */
  sim: Partial<SimulatorConfig>;
}

/** GitHub's published secondary limits (docs.github.com, "Rate limits for the REST API"). */
export const GITHUB_SECONDARY = { points_per_minute: 900, mutation_points: 5, read_points: 1, max_concurrent: 100 } as const;
/** JIT configs a minute one credential can get under the points limit alone. */
export const JIT_PER_MINUTE = GITHUB_SECONDARY.points_per_minute / GITHUB_SECONDARY.mutation_points;

export const SHIM_CREATE_MS = 1000;
/** A cloud VM's boot until its first request to the coordinator, and how much it varies (± fraction). */
export const PRODUCTION_BOOT = { boot_delay_ms: 20_000, boot_jitter: 0.1 } as const;

export function stackProfile(name: ProfileName = "loopback", shim: ShimMode = "sync", shimBatchMax: number | null = null): StackProfile {
  if (name === "loopback") {
    const shimFaults: Faults | null =
      shim === "async"
        ? { rules: [{ operation: "create", probability: 1, action: { type: "async", complete_after_ms: 0, callback: "deliver" } }] }
        : null;
    // Machines boot at once: what the coordinator's own pace is, with nothing else in the way.
    return { name, shim, vars: {}, github: null, shimFaults, shimBatchMax, sim: { boot_delay_ms: 0 } };
  }
  return {
    name,
    shim,
    // The coordinator's own GitHub budget (docs/performance.md), as deployed; loopback runs without one.
    vars: { OUTBOUND_CONNECTIONS_PER_OBJECT: "6", GITHUB_POINTS_PER_MINUTE: "810" },
    github: { latency: { jit_ms: 300, other_ms: 100, jitter: 0.2 }, secondary: { ...GITHUB_SECONDARY } },
    shimFaults:
      shim === "async"
        ? {
            rules: [
              { operation: "create", probability: 1, action: { type: "async", complete_after_ms: SHIM_CREATE_MS, callback: "deliver" } },
            ],
          }
        : { latency_ms: { create: SHIM_CREATE_MS } },
    shimBatchMax,
    sim: { ...PRODUCTION_BOOT },
  };
}

/** Reads `--profile NAME` and `--shim MODE` out of `argv`; returns the profile and the other arguments. */
export function profileFromArgs(argv: string[]): { profile: StackProfile; rest: string[] } {
  let name: ProfileName = "loopback";
  let shim: ShimMode = "sync";
  let shimBatchMax: number | null = null;
  const rest: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === "--profile") {
      const v = argv[++i];
      if (v !== "loopback" && v !== "production") throw new Error(`--profile takes loopback or production, not ${v}`);
      name = v;
    } else if (a === "--shim") {
      const v = argv[++i];
      if (v !== "sync" && v !== "async") throw new Error(`--shim takes sync or async, not ${v}`);
      shim = v;
    } else if (a === "--shim-batch") {
      const v = Number(argv[++i]);
      if (!Number.isInteger(v) || v < 0) throw new Error("--shim-batch takes a whole number (0: no batch create)");
      shimBatchMax = v;
    } else rest.push(a);
  }
  return { profile: stackProfile(name, shim, shimBatchMax), rest };
}
