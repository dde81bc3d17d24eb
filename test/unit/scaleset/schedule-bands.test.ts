import { describe, expect, it } from "vitest";
import type { MinIdleScheduleEntry } from "../../../src/db/scaleset/schema";
import { scheduleBands } from "../../../src/scaleset/schedule/schedule-bands";

const HOUR = 3_600_000;
const workday: MinIdleScheduleEntry = { name: "workday", cron: "0 8 * * MON-FRI", timezone: "UTC", min_idle_runners: 5, prewarm: false };
const evening: MinIdleScheduleEntry = { name: "evening", cron: "0 18 * * MON-FRI", timezone: "UTC", min_idle_runners: 0, prewarm: false };

describe("schedule bands over a day", () => {
  // Tuesday 2026-11-24, 12:00 UTC, looking back 24 hours to Monday noon.
  const to = Date.parse("2026-11-24T12:00:00Z");
  const from = to - 24 * HOUR;

  it("one band per stretch an entry held, the scale set's own min idle left out", () => {
    expect(scheduleBands({ entries: [workday, evening], minIdleRunners: 1, leadMs: 0, from, to })).toEqual([
      { from, to: Date.parse("2026-11-23T18:00:00Z"), name: "workday", minIdle: 5 },
      { from: Date.parse("2026-11-23T18:00:00Z"), to: Date.parse("2026-11-24T08:00:00Z"), name: "evening", minIdle: 0 },
      { from: Date.parse("2026-11-24T08:00:00Z"), to, name: "workday", minIdle: 5 },
    ]);
  });

  it("a prewarm entry's band starts a boot time early", () => {
    const bands = scheduleBands({ entries: [{ ...workday, prewarm: true }, evening], minIdleRunners: 1, leadMs: 90_000, from, to });
    expect(bands.at(-1)).toEqual({ from: Date.parse("2026-11-24T07:58:30Z"), to, name: "workday", minIdle: 5 });
  });

  it("no entries, or none that matched yet: no band", () => {
    expect(scheduleBands({ entries: [], minIdleRunners: 1, leadMs: 0, from, to })).toEqual([]);
    const leapDay: MinIdleScheduleEntry = { ...workday, name: "leap", cron: "0 8 29 2 *" };
    expect(scheduleBands({ entries: [leapDay], minIdleRunners: 1, leadMs: 0, from, to })).toEqual([]);
  });
});
