import { describe, expect, it } from "vitest";
import { lapStartBefore, WALK_LAP_MS, walkDue, walkScanRows, walkStep } from "../../src/retention/key-walk";

const NOW = 1_800_000_000_000;

describe("retention's walk by key", () => {
  it("starts a lap when none ran yet, and keeps the window's end as the cursor", () => {
    const step = walkStep({ position: "", lapStartedAt: 0 }, { scanned: 100, last: "k100", cut: null }, 100, NOW);
    expect(step).toEqual({ kind: "walk", from: "", to: "k100", next: { position: "k100", lapStartedAt: NOW }, lapEnded: false });
  });

  it("goes on from the cursor and keeps the lap's start", () => {
    const started = NOW - 3_600_000;
    const step = walkStep({ position: "k100", lapStartedAt: started }, { scanned: 100, last: "k200", cut: null }, 100, NOW);
    expect(step).toMatchObject({ from: "k100", to: "k200", next: { position: "k200", lapStartedAt: started }, lapEnded: false });
  });

  it("ends the lap at a short window: the cursor goes back to the start, the lap's start stays", () => {
    const started = NOW - 3_600_000;
    const step = walkStep({ position: "k200", lapStartedAt: started }, { scanned: 7, last: "k207", cut: null }, 100, NOW);
    expect(step).toMatchObject({ from: "k200", to: "k207", next: { position: "", lapStartedAt: started }, lapEnded: true });
  });

  it("ends the lap when nothing is after the cursor", () => {
    const step = walkStep({ position: "k200", lapStartedAt: NOW - 1 }, { scanned: 0, last: null, cut: null }, 100, NOW);
    expect(step).toMatchObject({ to: null, next: { position: "", lapStartedAt: NOW - 1 }, lapEnded: true });
  });

  it("an empty table: the lap starts and ends at once, and the next waits a lap's time", () => {
    const step = walkStep({ position: "", lapStartedAt: 0 }, { scanned: 0, last: null, cut: null }, 100, NOW);
    expect(step).toMatchObject({ kind: "walk", to: null, next: { position: "", lapStartedAt: NOW }, lapEnded: true });
    expect(walkDue({ position: "", lapStartedAt: NOW }, NOW + WALK_LAP_MS - 1)).toBe(false);
  });

  it("rests between laps until a lap's time after the last one started", () => {
    const last = NOW - WALK_LAP_MS + 1;
    expect(walkStep({ position: "", lapStartedAt: last }, { scanned: 0, last: null, cut: null }, 100, NOW)).toEqual({ kind: "rest" });
    expect(walkDue({ position: "", lapStartedAt: last }, NOW)).toBe(false);
    expect(walkDue({ position: "", lapStartedAt: NOW - WALK_LAP_MS }, NOW)).toBe(true);
    // The read is bound the same way: a lap that started at or before this may be followed.
    expect(lapStartBefore(NOW)).toBe(NOW - WALK_LAP_MS);
  });

  it("ends the window at the batch's last eligible row when it holds more, and goes on from there", () => {
    const step = walkStep({ position: "k100", lapStartedAt: NOW - 1 }, { scanned: 7, last: "k207", cut: "k150" }, 100, NOW);
    expect(step).toMatchObject({ from: "k100", to: "k150", next: { position: "k150", lapStartedAt: NOW - 1 }, lapEnded: false });
  });

  it("a lap under way goes on whatever its age", () => {
    expect(walkDue({ position: "k1", lapStartedAt: NOW }, NOW)).toBe(true);
  });

  it("reads twenty delete batches' worth of keys a batch", () => {
    expect(walkScanRows(500)).toBe(10_000);
  });
});
