/**
 * The production burst's figures from what the fakes recorded (bench/burst.ts reads them): the
 * simulator's machine timelines (shims/simulator/timeline.ts) and the fake GitHub's jobs. Plain
 * arithmetic, unit-tested in test/unit/bench-burst-figures.test.ts.
 *
 *  - booted-waiting share: of all the machine time until configured (created → configured, what a
 *    per-second cloud bills before the runner can take a job), the part spent booted and waiting
 *    for the JIT config (booted → configured). Near 0 when creates are paced to the JIT budget;
 *    near 1 when every machine boots at once and queues for its config.
 *  - creates outstanding: machines created and not yet configured at one moment; the peak is the
 *    cloud quota (vCPUs, instances) a burst holds before its runners can work.
 *  - GitHub's floor: what the REST points limit alone allows a pool of credentials, each minting
 *    `jitPerMinute` JIT configs a minute.
 */
import { percentile } from "./harness.mjs";

/** The steps of one machine's life the figures use, in ms since the epoch (null: not reached). */
export interface MachineTimes {
  created_at: number;
  booted_at: number | null;
  configured_at: number | null;
  deleted_at: number | null;
}

const seconds = (ms: number) => Math.round(ms / 100) / 10;

/** Machine time booted and waiting for a JIT config, over machine time until configured, for the machines that got configured. */
export function bootedWaiting(machines: MachineTimes[]) {
  const configured = machines.filter(
    (m): m is MachineTimes & { booted_at: number; configured_at: number } => m.configured_at !== null && m.booted_at !== null,
  );
  const waits = configured.map((m) => Math.max(0, m.configured_at - m.booted_at)).sort((a, b) => a - b);
  const waiting = waits.reduce((sum, w) => sum + w, 0);
  const untilConfigured = configured.reduce((sum, m) => sum + Math.max(0, m.configured_at - m.created_at), 0);
  const waitS = (p: number) => {
    const ms = percentile(waits, p);
    return ms === null ? null : seconds(ms);
  };
  return {
    machines_configured: configured.length,
    booted_waiting_share: untilConfigured > 0 ? Math.round((waiting / untilConfigured) * 1000) / 1000 : null,
    booted_waiting_machine_s: seconds(waiting),
    machine_s_until_configured: seconds(untilConfigured),
    booted_wait_per_machine: { p50_s: waitS(50), p99_s: waitS(99), max_s: waits.length ? seconds(waits.at(-1)!) : null },
  };
}

/**
 * The most machines at once that were created and not yet configured. A machine deleted before it
 * was configured stops counting when it is deleted; one neither configured nor deleted counts to
 * the end. At the same millisecond a machine configured is counted out before one created is
 * counted in (the lower reading).
 */
export function createsOutstandingPeak(machines: MachineTimes[]): number {
  const events: [at: number, change: 1 | -1][] = [];
  for (const m of machines) {
    events.push([m.created_at, 1]);
    const out = m.configured_at ?? m.deleted_at;
    if (out !== null) events.push([Math.max(out, m.created_at), -1]);
  }
  events.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let now = 0;
  let peak = 0;
  for (const [, change] of events) {
    now += change;
    peak = Math.max(peak, now);
  }
  return peak;
}

/** The moment by which `n` of `times` had happened (the n-th earliest), or null when fewer did. */
export function nthTime(times: number[], n: number): number | null {
  if (n < 1 || times.length < n) return null;
  return [...times].sort((a, b) => a - b)[n - 1]!;
}

/** Seconds GitHub's points limit alone needs for `jobs` JIT configs from `credentials` credentials, each `jitPerMinute` a minute. */
export function githubFloorS(jobs: number, jitPerMinute: number, credentials: number): number {
  return Math.round((jobs / (jitPerMinute * Math.max(1, credentials))) * 60 * 10) / 10;
}

/**
 * All runners configured over what the pool's budget and one boot allow: 1.0 is the ideal (the
 * last JIT config minted at the floor, its machine booted just then). Null without a figure to divide.
 */
export function configuredOverFloorPlusBoot(allConfiguredS: number | null, floorS: number | null, bootS: number): number | null {
  const ideal = (floorS ?? 0) + bootS;
  if (allConfiguredS === null || ideal <= 0) return null;
  return Math.round((allConfiguredS / ideal) * 100) / 100;
}
