/**
 * When each simulated machine reached each step of its life, kept after the machine is deleted
 * so that a benchmark can read a whole burst back once it has settled: created (the shim got
 * its create), booted (its boot delay over: the moment it first asks the coordinator for
 * anything), configured (it holds all three JIT files), idle (its runner reported idle), deleted.
 * Plain data and plain functions; the simulator fills the fields and serves them on
 * `GET /_control/simulator/timeline`.
 */

export interface MachineTimeline {
  tenant: string;
  /** The scale set (pool) the coordinator created the machine for. */
  pool_id: string;
  name: string;
  provider_id: string;
  /** The boot delay this machine drew (the knob, jittered). */
  boot_delay_ms: number | null;
  /** What its create asked for; shape null: not a shaped scale set's machine. */
  flavor: string | null;
  image: string | null;
  shape: { disk_gb: number | null; spot: boolean } | null;
  created_at: number;
  booted_at: number | null;
  configured_at: number | null;
  idle_at: number | null;
  deleted_at: number | null;
}

/** Deleted machines kept for the timeline: enough for a few 1,000-job bursts, bounded so a long run cannot grow without end. */
export const TIMELINE_HISTORY = 20_000;

/** A machine's boot delay: `delayMs` × (1 ± jitter), drawn uniformly (jitter 0: exactly `delayMs`). */
export function jitteredBootDelay(delayMs: number, jitter: number, random: () => number = Math.random): number {
  const j = Math.min(1, Math.max(0, jitter));
  return Math.max(0, Math.round(delayMs * (1 + j * (2 * random() - 1))));
}

/** Which machines a reader wants: one tenant, one pool, created at or after `since` (ms). */
export interface TimelineFilter {
  tenant?: string;
  pool_id?: string;
  since?: number;
}

export function matchesTimeline(t: MachineTimeline, f: TimelineFilter): boolean {
  return (
    (f.tenant === undefined || t.tenant === f.tenant) &&
    (f.pool_id === undefined || t.pool_id === f.pool_id) &&
    (f.since === undefined || t.created_at >= f.since)
  );
}

/** The deleted machines' timelines, oldest first, the oldest forgotten past `max`. */
export class TimelineHistory {
  private readonly kept: MachineTimeline[] = [];
  private readonly max: number;

  constructor(max: number = TIMELINE_HISTORY) {
    this.max = max;
  }

  add(t: MachineTimeline): void {
    this.kept.push(t);
    // Trimmed in chunks: one splice per tenth of the history rather than a shift per machine.
    if (this.kept.length > this.max + Math.ceil(this.max / 10)) this.kept.splice(0, this.kept.length - this.max);
  }

  list(f: TimelineFilter = {}): MachineTimeline[] {
    const from = Math.max(0, this.kept.length - this.max);
    return this.kept.slice(from).filter((t) => matchesTimeline(t, f));
  }
}

/** Reads `tenant`, `pool` and `since` (ms since the epoch) from a query string; an error message for a bad one. */
export function timelineFilter(query: URLSearchParams): TimelineFilter | { error: string } {
  const out: TimelineFilter = {};
  const tenant = query.get("tenant");
  const pool = query.get("pool");
  const since = query.get("since");
  if (tenant) out.tenant = tenant;
  if (pool) out.pool_id = pool;
  if (since !== null) {
    const n = Number(since);
    if (!Number.isFinite(n) || n < 0) return { error: "since takes milliseconds since the epoch" };
    out.since = n;
  }
  return out;
}
