import { describe, expect, it } from "vitest";
import { nextPass, RETRY_FIRST_MS, SOON_MS, worstTrouble } from "../../../src/recovery/pass-timing";

const NOW = Date.parse("2026-12-06T12:00:00Z");
const MINUTE = 60_000;

describe("when the next recovery pass comes", () => {
  it("a quiet pass waits the interval; one that left work comes back soon", () => {
    expect(nextPass({ now: NOW, intervalMs: MINUTE, more: false, trouble: null, troubleStreak: 3 })).toEqual({
      at: NOW + MINUTE,
      troubleStreak: 0,
    });
    expect(nextPass({ now: NOW, intervalMs: MINUTE, more: true, trouble: null, troubleStreak: 0 }).at).toBe(NOW + SOON_MS);
  });

  it("a 502 is tried again in seconds, backing off to the interval while the trouble lasts", () => {
    const delays: number[] = [];
    let streak = 0;
    for (let i = 0; i < 5; i++) {
      const next = nextPass({ now: NOW, intervalMs: MINUTE, more: false, trouble: { until: null }, troubleStreak: streak });
      delays.push(next.at - NOW);
      streak = next.troubleStreak;
    }
    expect(delays).toEqual([RETRY_FIRST_MS, 2 * RETRY_FIRST_MS, 4 * RETRY_FIRST_MS, MINUTE, MINUTE]);
    // The first quiet pass after it starts over.
    expect(nextPass({ now: NOW, intervalMs: MINUTE, more: false, trouble: null, troubleStreak: streak }).troubleStreak).toBe(0);
  });

  it("a rate limit is waited out, but never past the interval", () => {
    const at = (until: number) => nextPass({ now: NOW, intervalMs: MINUTE, more: true, trouble: { until }, troubleStreak: 0 }).at;
    expect(at(NOW + 30_000)).toBe(NOW + 30_000);
    expect(at(NOW + 1_000)).toBe(NOW + RETRY_FIRST_MS);
    expect(at(NOW + 3_600_000)).toBe(NOW + MINUTE);
  });

  it("never comes sooner than the interval allows when the interval is short", () => {
    expect(nextPass({ now: NOW, intervalMs: 2_000, more: false, trouble: { until: null }, troubleStreak: 0 }).at).toBe(NOW + 2_000);
  });

  it("a pass's troubles count as the longest wait GitHub asked for", () => {
    expect(worstTrouble([null, null])).toBeNull();
    expect(worstTrouble([null, { until: null }])).toEqual({ until: null });
    expect(worstTrouble([{ until: 5 }, { until: null }, { until: 9 }])).toEqual({ until: 9 });
  });
});
