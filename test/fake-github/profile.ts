/**
 * The fake GitHub's production-like behaviour (PUT /_fake/profile): how long it takes to answer,
 * and GitHub's secondary rate limits per credential — points per minute (reads 1, mutations 5)
 * and concurrent requests — refused the way GitHub refuses them: 403 (or 429) "You have
 * exceeded a secondary rate limit", with `retry-after` when the wait is known (the points
 * window), and the usual x-ratelimit-* headers of the primary limit (remaining > 0).
 * A refused request costs no points. Plain web APIs only, like world.ts.
 */
import type { GithubProfile } from "./types.ts";

const WINDOW_MS = 60_000;
const READS = new Set(["GET", "HEAD", "OPTIONS"]);

export type SecondaryRefusal = { kind: "points" | "concurrency"; status: number; retryAfterS: number | null };

/** What one credential has used: points in the last minute, requests under way. */
interface Usage {
  charges: { at: number; points: number }[];
  inFlight: number;
}

export class GithubLimits {
  private readonly usage = new Map<string, Usage>();
  profile: GithubProfile;

  constructor(profile: GithubProfile) {
    this.profile = profile;
  }

  private of(key: string): Usage {
    const known = this.usage.get(key);
    if (known) return known;
    const u: Usage = { charges: [], inFlight: 0 };
    this.usage.set(key, u);
    return u;
  }

  /** How long the request waits before it is answered (jittered uniformly by ± jitter). */
  latencyMs(operation: string | null, random: () => number = Math.random): number {
    const l = this.profile.latency;
    if (!l) return 0;
    const base = operation === "generate_jit_config" ? l.jit_ms : l.other_ms;
    const jitter = l.jitter ?? 0.2;
    return Math.max(0, Math.round(base * (1 + jitter * (2 * random() - 1))));
  }

  /**
   * Lets a request of `key` (a credential) in, charging its points, or refuses it. An admitted
   * request must be let out with `leave(key)` once answered.
   */
  enter(key: string, method: string, now: number): SecondaryRefusal | null {
    const s = this.profile.secondary;
    const u = this.of(key);
    if (!s) {
      u.inFlight++;
      return null;
    }
    const status = s.status ?? 403;
    // GitHub gives no wait for too many concurrent requests: the client waits a minute or more.
    if (u.inFlight >= s.max_concurrent) return { kind: "concurrency", status, retryAfterS: null };
    u.charges = u.charges.filter((c) => c.at > now - WINDOW_MS);
    const cost = READS.has(method.toUpperCase()) ? (s.read_points ?? 1) : (s.mutation_points ?? 5);
    let used = u.charges.reduce((sum, c) => sum + c.points, 0);
    if (used + cost > s.points_per_minute) {
      // Wait until enough of the oldest charges have left the window for this one to fit.
      let freeAt = now;
      for (const c of u.charges) {
        if (used + cost <= s.points_per_minute) break;
        used -= c.points;
        freeAt = c.at + WINDOW_MS;
      }
      return { kind: "points", status, retryAfterS: Math.max(1, Math.ceil((freeAt - now) / 1000)) };
    }
    u.charges.push({ at: now, points: cost });
    u.inFlight++;
    return null;
  }

  leave(key: string): void {
    const u = this.of(key);
    u.inFlight = Math.max(0, u.inFlight - 1);
  }

  /** Points `key` has used in the minute before `now`. */
  pointsUsed(key: string, now: number): number {
    return this.of(key)
      .charges.filter((c) => c.at > now - WINDOW_MS)
      .reduce((sum, c) => sum + c.points, 0);
  }
}
