import { describe, expect, it } from "vitest";
import { runnerSample, SAMPLE_SLOT_MS, sampleDue, sampleSlot } from "../../src/scaleset/runner/runner-sample";

describe("runner samples", () => {
  it("fall in 5-minute slots", () => {
    const slot = Date.parse("2024-05-01T10:05:00Z");
    expect(SAMPLE_SLOT_MS).toBe(300_000);
    expect(sampleSlot(slot)).toBe(slot);
    expect(sampleSlot(slot + 299_999)).toBe(slot);
    expect(sampleSlot(slot + 300_000)).toBe(slot + 300_000);
  });

  it("split the live runners into idle, busy, booting and the rest, with the min idle planned with", () => {
    const now = Date.parse("2024-05-01T10:07:30Z");
    // 10 live: 3 idle and 2 booting (available), 4 busy, 1 being deleted.
    expect(runnerSample({ live: 10, available: 5, idle: 3, busy: 4 }, 2, now)).toEqual({
      at: Date.parse("2024-05-01T10:05:00Z"),
      idle: 3,
      busy: 4,
      booting: 2,
      other: 1,
      minIdle: 2,
    });
    expect(runnerSample({ live: 0, available: 0, idle: 0, busy: 0 }, 0, now)).toMatchObject({ idle: 0, busy: 0, booting: 0, other: 0 });
  });
});

describe("sampleDue", () => {
  const slot = 1_800_000_000_000;
  const zero = { at: slot, idle: 0, busy: 0, booting: 0, other: 0, minIdle: 0 };
  it("writes once per slot", () => {
    expect(sampleDue({ ...zero, idle: 1 }, { at: null, zero: false })).toBe(true);
    expect(sampleDue({ ...zero, idle: 1 }, { at: slot, zero: false })).toBe(false);
    expect(sampleDue({ ...zero, at: slot + SAMPLE_SLOT_MS, idle: 1 }, { at: slot, zero: false })).toBe(true);
  });

  it("writes the first zero sample after runners, then no zero sample until something changes", () => {
    const next = { ...zero, at: slot + SAMPLE_SLOT_MS };
    expect(sampleDue(next, { at: slot, zero: false })).toBe(true);
    expect(sampleDue(next, { at: slot, zero: true })).toBe(false);
    expect(sampleDue({ ...next, minIdle: 1 }, { at: slot, zero: true })).toBe(true);
    expect(sampleDue(null, { at: null, zero: false })).toBe(false);
  });
});
