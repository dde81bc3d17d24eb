import { describe, expect, it } from "vitest";
import { tickDelay } from "../../../src/scaleset/idle-tick";

const settings = { tickMs: 30_000, idleTickMs: 300_000 };
const nothing = { live: 0, queued: 0, desired: 0 };

describe("tickDelay", () => {
  it("waits the idle tick when nothing is live, queued or wanted and the pass did nothing", () => {
    expect(tickDelay(nothing, false, settings)).toBe(300_000);
  });

  it("keeps the tick while anything is live, queued or wanted, or the pass acted", () => {
    expect(tickDelay({ ...nothing, live: 1 }, false, settings)).toBe(30_000);
    expect(tickDelay({ ...nothing, queued: 2 }, false, settings)).toBe(30_000);
    expect(tickDelay({ ...nothing, desired: 1 }, false, settings)).toBe(30_000);
    expect(tickDelay(nothing, true, settings)).toBe(30_000);
  });

  it("keeps the tick after a pass that failed (no summary)", () => {
    expect(tickDelay(null, false, settings)).toBe(30_000);
  });
});
