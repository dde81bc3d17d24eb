import { describe, expect, it } from "vitest";
import { QUIET_AFTER_MS, tickDelay } from "../../../src/scaleset/idle-tick";

const settings = { tickMs: 30_000, idleTickMs: 300_000, quietTickMs: 1_800_000 };
const nothing = { live: 0, queued: 0, desired: 0 };
const NOW = 1_000_000_000;
// Its last machine went a minute ago: not quiet yet.
const recent = { lastDeletedAt: NOW - 60_000, now: NOW };

describe("tickDelay", () => {
  it("waits the idle tick when nothing is live, queued or wanted and the pass did nothing", () => {
    expect(tickDelay(nothing, false, settings, recent)).toBe(300_000);
  });

  it("keeps the tick while anything is live, queued or wanted, or the pass acted", () => {
    expect(tickDelay({ ...nothing, live: 1 }, false, settings, recent)).toBe(30_000);
    expect(tickDelay({ ...nothing, queued: 2 }, false, settings, recent)).toBe(30_000);
    expect(tickDelay({ ...nothing, desired: 1 }, false, settings, recent)).toBe(30_000);
    expect(tickDelay(nothing, true, settings, recent)).toBe(30_000);
  });

  it("keeps the tick after a pass that failed (no summary)", () => {
    expect(tickDelay(null, false, settings, recent)).toBe(30_000);
  });

  it("waits the quiet tick once it has had no machine for an hour, or never had one", () => {
    expect(tickDelay(nothing, false, settings, { lastDeletedAt: NOW - QUIET_AFTER_MS + 1, now: NOW })).toBe(300_000);
    expect(tickDelay(nothing, false, settings, { lastDeletedAt: NOW - QUIET_AFTER_MS, now: NOW })).toBe(1_800_000);
    expect(tickDelay(nothing, false, settings, { lastDeletedAt: null, now: NOW })).toBe(1_800_000);
    // Quiet or not, anything to do brings the tick back.
    expect(tickDelay({ ...nothing, queued: 1 }, false, settings, { lastDeletedAt: null, now: NOW })).toBe(30_000);
  });
});
