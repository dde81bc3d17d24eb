import { describe, expect, it } from "vitest";
import type { MinIdleScheduleEntry } from "../../../src/db/scaleset/schema";
import { evaluateMinIdle } from "../../../src/scaleset/schedule/min-idle-schedule";
import { scheduleProblems, schedulesAboveMax } from "../../../src/scaleset/schedule/schedule-validation";

const entry = (name: string, cron: string, min: number, over: Partial<MinIdleScheduleEntry> = {}): MinIdleScheduleEntry => ({
  name,
  cron,
  timezone: "Europe/Berlin",
  min_idle_runners: min,
  prewarm: false,
  ...over,
});

/** The evaluation with instants as ISO strings and the entry by name. */
const at = (now: string, entries: MinIdleScheduleEntry[], leadMs = 0, minIdleRunners = 1) => {
  const r = evaluateMinIdle({ now: Date.parse(now), entries, minIdleRunners, leadMs });
  const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
  return { minIdle: r.minIdle, entry: r.entry?.name ?? null, since: iso(r.since), until: iso(r.until) };
};

// Berlin is UTC+1 in winter: 08:00 there is 07:00Z. 2026-11-30 is a Monday, 2026-12-04 a Friday.
const workingDay = [entry("workday", "0 8 * * 1-5", 5), entry("evening", "0 18 * * 1-5", 0)];

describe("min idle on a schedule", () => {
  it("follows a working day: the latest entry that matched, until the next one matches", () => {
    expect(at("2026-11-30T09:00:00Z", workingDay)).toEqual({
      minIdle: 5,
      entry: "workday",
      since: "2026-11-30T07:00:00.000Z",
      until: "2026-11-30T17:00:00.000Z",
    });
    expect(at("2026-11-30T17:00:00Z", workingDay)).toMatchObject({ minIdle: 0, entry: "evening", until: "2026-12-01T07:00:00.000Z" });
  });

  it("carries Friday evening's entry over the weekend, until Monday morning", () => {
    const saturday = at("2026-12-05T12:00:00Z", workingDay);
    expect(saturday).toEqual({ minIdle: 0, entry: "evening", since: "2026-12-04T17:00:00.000Z", until: "2026-12-07T07:00:00.000Z" });
  });

  it("gives `until` across midnight", () => {
    const night = [entry("late", "30 23 * * *", 3, { timezone: "America/New_York" }), entry("quiet", "15 0 * * *", 0)];
    // 23:45 in New York (EST, UTC-5) is 04:45Z; the Berlin entry's 00:15 is 23:15Z that day.
    expect(at("2026-12-02T04:45:00Z", night)).toMatchObject({ minIdle: 3, entry: "late", until: "2026-12-02T23:15:00.000Z" });
    const midnight = [entry("late", "30 23 * * *", 3), entry("quiet", "15 0 * * *", 0)];
    expect(at("2026-12-01T22:45:00Z", midnight)).toMatchObject({ entry: "late", until: "2026-12-01T23:15:00.000Z" });
  });

  it("starts a prewarm entry one boot time ahead, so its runners are idle when the day starts", () => {
    const prewarmed = [entry("workday", "0 8 * * 1-5", 5, { prewarm: true }), entry("evening", "0 18 * * 1-5", 0)];
    const lead = 5 * 60_000;
    // 07:54 in Berlin: still evening, and the workday starts (pre-warming) at 07:55.
    expect(at("2026-11-30T06:54:00Z", prewarmed, lead)).toMatchObject({ minIdle: 0, entry: "evening", until: "2026-11-30T06:55:00.000Z" });
    expect(at("2026-11-30T06:55:00Z", prewarmed, lead)).toEqual({
      minIdle: 5,
      entry: "workday",
      since: "2026-11-30T06:55:00.000Z",
      until: "2026-11-30T17:00:00.000Z",
    });
    // The evening entry is not pre-warmed: it ends the day at 18:00 sharp; the next morning starts ahead again.
    expect(at("2026-11-30T17:00:00Z", prewarmed, lead)).toMatchObject({ entry: "evening", until: "2026-12-01T06:55:00.000Z" });
    // Without a lead, prewarm changes nothing.
    expect(at("2026-11-30T06:55:00Z", prewarmed, 0)).toMatchObject({ entry: "evening", until: "2026-11-30T07:00:00.000Z" });
  });

  it("lets the latest match win where entries overlap, and the later-listed one on a tie", () => {
    const overlapping = [...workingDay, entry("release", "0 12 * * WED", 8)];
    // 2026-12-02 is a Wednesday: 11:00 Berlin (10:00Z) is the workday's, 13:00 the release's.
    expect(at("2026-12-02T10:00:00Z", overlapping)).toMatchObject({ minIdle: 5, entry: "workday", until: "2026-12-02T11:00:00.000Z" });
    expect(at("2026-12-02T12:00:00Z", overlapping)).toMatchObject({ minIdle: 8, entry: "release", until: "2026-12-02T17:00:00.000Z" });
    // Thursday morning the workday matched again, later than Wednesday's release.
    expect(at("2026-12-03T08:00:00Z", overlapping)).toMatchObject({ minIdle: 5, entry: "workday" });
    const tie = [entry("a", "0 8 * * *", 2), entry("b", "0 8 * * *", 7)];
    expect(at("2026-12-03T08:00:00Z", tie)).toMatchObject({ minIdle: 7, entry: "b" });
  });

  it("keeps the scale set's own min idle while no entry has matched, and has no `until` when none will", () => {
    const leapDay = [entry("leap", "0 9 29 2 *", 4)];
    expect(at("2026-12-01T12:00:00Z", leapDay, 0, 2)).toEqual({ minIdle: 2, entry: null, since: null, until: null });
    // One entry has matched, the other not yet: the one that did wins; `until` is when the other first matches.
    const firstOfJanuary = [entry("leap", "0 9 29 2 *", 4), entry("new-year", "0 0 1 1 *", 6), entry("never", "0 0 30 2 *", 9)];
    expect(at("2026-12-01T12:00:00Z", firstOfJanuary)).toMatchObject({ minIdle: 6, entry: "new-year", until: "2026-12-31T23:00:00.000Z" });
    expect(at("2026-12-01T12:00:00Z", [], 0, 3)).toEqual({ minIdle: 3, entry: null, since: null, until: null });
  });

  it("follows each entry's own zone across daylight saving changes, in two zones at once", () => {
    // 2026-03-10: New York is on EDT (UTC-4) since the 8th, Berlin still on CET (UTC+1) until the 29th.
    const twoOffices = [entry("berlin", "0 9 * * *", 4), entry("new-york", "0 9 * * *", 6, { timezone: "America/New_York" })];
    expect(at("2026-03-10T12:00:00Z", twoOffices)).toMatchObject({ minIdle: 4, entry: "berlin", until: "2026-03-10T13:00:00.000Z" });
    expect(at("2026-03-10T13:00:00Z", twoOffices)).toMatchObject({ minIdle: 6, entry: "new-york", until: "2026-03-11T08:00:00.000Z" });
    // After Berlin's own change (the 29th) its 09:00 is 07:00Z.
    expect(at("2026-03-30T12:00:00Z", twoOffices)).toMatchObject({ entry: "berlin", since: "2026-03-30T07:00:00.000Z" });
    // In autumn, Berlin goes back on 25 October and New York on 1 November.
    expect(at("2026-10-26T12:00:00Z", twoOffices)).toMatchObject({
      entry: "berlin",
      since: "2026-10-26T08:00:00.000Z",
      until: "2026-10-26T13:00:00.000Z",
    });
    expect(at("2026-11-02T15:00:00Z", twoOffices)).toMatchObject({ entry: "new-york", since: "2026-11-02T14:00:00.000Z" });
  });

  it("changes min idle once for an entry in the hour clocks repeat, and not at all for one in the hour they skip", () => {
    const night = [entry("night", "30 2 * * *", 2), entry("morning", "0 6 * * *", 4)];
    // 02:30 CEST (00:30Z) took effect; at 02:45 CET (01:45Z), the repeat, it is still that one, and the next is the morning.
    expect(at("2026-10-25T01:45:00Z", night)).toMatchObject({
      entry: "night",
      since: "2026-10-25T00:30:00.000Z",
      until: "2026-10-25T05:00:00.000Z",
    });
    // On the night clocks go forward, 02:30 does not exist: the previous morning's entry holds through
    // the night, and what comes next is this morning's 06:00 CEST (04:00Z).
    expect(at("2026-03-29T00:00:00Z", night)).toEqual({
      minIdle: 4,
      entry: "morning",
      since: "2026-03-28T05:00:00.000Z",
      until: "2026-03-29T04:00:00.000Z",
    });
    expect(at("2026-03-29T04:30:00Z", night)).toMatchObject({
      entry: "morning",
      since: "2026-03-29T04:00:00.000Z",
      until: "2026-03-30T00:30:00.000Z",
    });
  });
});

describe("schedule validation", () => {
  it("names each bad field of each entry", () => {
    const problems = scheduleProblems([
      entry("a", "0 8 * * 1-5", 1),
      entry("b", "0 25 * * *", 1, { timezone: "Mars/Base" }),
      entry("a", "0 8 * * *", 1),
    ]);
    expect(problems).toEqual([
      { path: [1, "cron"], message: "invalid cron '0 25 * * *': hour '25': 25 is out of range 0-23" },
      { path: [1, "timezone"], message: expect.stringContaining("unknown time zone 'Mars/Base'") },
      { path: [2, "name"], message: "two entries are named 'a': names must differ" },
    ]);
    expect(scheduleProblems(workingDay)).toEqual([]);
  });

  it("refuses min idle above max_runners", () => {
    expect(schedulesAboveMax(workingDay, 4)).toEqual([
      { path: [0, "min_idle_runners"], message: "schedule 'workday' asks for 5 idle runners, above max_runners (4)" },
    ]);
    expect(schedulesAboveMax(workingDay, 5)).toEqual([]);
  });
});
