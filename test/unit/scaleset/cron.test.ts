import { describe, expect, it } from "vitest";
import { type CronSpec, dayMatches, parseCron } from "../../../src/scaleset/schedule/cron";
import { lastMatch, nextMatch } from "../../../src/scaleset/schedule/cron-matches";
import { instantOfWall, timeZoneProblem } from "../../../src/scaleset/schedule/zone-time";

const spec = (cron: string): CronSpec => {
  const parsed = parseCron(cron);
  if (!parsed.ok) throw new Error(parsed.error);
  return parsed.spec;
};
const refusal = (cron: string) => {
  const parsed = parseCron(cron);
  if (parsed.ok) throw new Error(`'${cron}' parsed`);
  return { field: parsed.field, error: parsed.error };
};
const days = (s: CronSpec) => s.daysOfWeek.flatMap((ok, d) => (ok ? [d] : []));
const t = (iso: string) => Date.parse(iso);
const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

describe("cron expressions", () => {
  it("reads numbers, lists, ranges, steps and names", () => {
    const s = spec("*/15 8-18/5 * jan,Mar-MAY mon-FRI");
    expect(s.minutes).toEqual([0, 15, 30, 45]);
    expect(s.hours).toEqual([8, 13, 18]);
    expect(s.months.flatMap((ok, m) => (ok ? [m] : []))).toEqual([1, 3, 4, 5]);
    expect(days(s)).toEqual([1, 2, 3, 4, 5]);
    expect(spec("0 0 1,15,31 * *").daysOfMonth.flatMap((ok, d) => (ok ? [d] : []))).toEqual([1, 15, 31]);
    expect(spec(" 5   4  *  *  * ").source).toBe("5   4  *  *  *");
  });

  it("takes 0 and 7 both as Sunday", () => {
    expect(days(spec("0 0 * * 7"))).toEqual([0]);
    expect(days(spec("0 0 * * 5-7"))).toEqual([0, 5, 6]);
    expect(days(spec("0 0 * * SUN"))).toEqual([0]);
  });

  it("matches a day on either day field when both are restricted, on both otherwise", () => {
    // 2026-12-01 is a Tuesday, 2026-12-07 a Monday, 2026-12-08 a Tuesday.
    const either = spec("0 0 1 * MON");
    expect(dayMatches(either, 12, 1, 2)).toBe(true);
    expect(dayMatches(either, 12, 7, 1)).toBe(true);
    expect(dayMatches(either, 12, 8, 2)).toBe(false);
    expect(dayMatches(spec("0 0 1 * *"), 12, 7, 1)).toBe(false);
    expect(dayMatches(spec("0 0 * * MON"), 12, 1, 2)).toBe(false);
    // A step starting with `*` leaves its field unrestricted, as Vixie cron reads it: both must hold.
    const stepped = spec("0 0 */2 * MON");
    expect(dayMatches(stepped, 12, 7, 1)).toBe(true);
    expect(dayMatches(stepped, 12, 14, 1)).toBe(false);
    expect(dayMatches(stepped, 12, 3, 4)).toBe(false);
    expect(dayMatches(spec("0 0 * FEB *"), 12, 1, 2)).toBe(false);
  });

  it("refuses what it does not read, naming the field and why", () => {
    expect(refusal("0 24 * * *")).toEqual({ field: "hour", error: "hour '24': 24 is out of range 0-23" });
    expect(refusal("60 0 * * *").field).toBe("minute");
    expect(refusal("0 0 0 * *")).toMatchObject({ field: "day of month", error: expect.stringContaining("out of range 1-31") });
    expect(refusal("0 0 * 13 *").field).toBe("month");
    expect(refusal("0 0 * * 8").field).toBe("day of week");
    expect(refusal("0 8 * *")).toMatchObject({ field: null, error: expect.stringContaining("expected 5 fields") });
    expect(refusal("0 0 8 * * *").error).toContain("seconds and years are not supported");
    expect(refusal("@daily")).toMatchObject({ field: null, error: expect.stringContaining("'0 0 * * *'") });
    expect(refusal("0 8 * * MON#2")).toMatchObject({ field: "day of week", error: expect.stringContaining("not supported") });
    expect(refusal("0 8 L * *")).toMatchObject({ field: "day of month", error: expect.stringContaining("not supported") });
    expect(refusal("0 8 ? * MON").error).toContain("not supported");
    expect(refusal("0 8 * FOO *")).toMatchObject({ field: "month", error: expect.stringContaining("unknown name 'FOO'") });
    expect(refusal("0 8 * * MONDAY").error).toContain("unknown name");
    expect(refusal("x 8 * * *").error).toContain("not a number");
    expect(refusal("5/15 * * * *").error).toContain("write 5-59/15");
    expect(refusal("0 22-2 * * *").error).toContain("runs backwards (write it as a list: 22-23,0-2)");
    expect(refusal("*/0 * * * *").error).toContain("above 0");
    expect(refusal("1,,2 * * * *").error).toContain("empty item");
    expect(refusal("1-2-3 * * * *").error).toContain("not a range");
    expect(refusal("*/5/2 * * * *").error).toContain("more than one '/'");
    expect(refusal("").error).toContain("got 0");
  });
});

describe("time zones", () => {
  it("knows IANA zones and refuses the rest, offsets included", () => {
    expect(timeZoneProblem("Europe/Berlin")).toBeNull();
    expect(timeZoneProblem("UTC")).toBeNull();
    expect(timeZoneProblem("Mars/Olympus_Mons")).toContain("unknown time zone 'Mars/Olympus_Mons'");
    expect(timeZoneProblem("+01:00")).toContain("an offset, not a time zone");
  });

  it("has no instant for a wall time clocks skip, and the first of one they repeat", () => {
    expect(instantOfWall("Europe/Berlin", t("2026-03-29T02:30:00Z"))).toBeNull();
    expect(iso(instantOfWall("Europe/Berlin", t("2026-10-25T02:30:00Z")))).toBe("2026-10-25T00:30:00.000Z");
    expect(iso(instantOfWall("America/New_York", t("2026-11-01T01:30:00Z")))).toBe("2026-11-01T05:30:00.000Z");
    expect(iso(instantOfWall("America/New_York", t("2026-07-01T09:00:00Z")))).toBe("2026-07-01T13:00:00.000Z");
  });
});

describe("when a cron matches in a zone", () => {
  const berlin = "Europe/Berlin";
  const newYork = "America/New_York";

  it("never fires in the hour clocks skip (spring forward), in Berlin and New York", () => {
    const halfPastTwo = spec("30 2 * * *");
    expect(iso(nextMatch(halfPastTwo, berlin, t("2026-03-27T12:00:00Z")))).toBe("2026-03-28T01:30:00.000Z");
    expect(iso(nextMatch(halfPastTwo, berlin, t("2026-03-28T12:00:00Z")))).toBe("2026-03-30T00:30:00.000Z");
    expect(iso(lastMatch(halfPastTwo, berlin, t("2026-03-29T23:00:00Z")))).toBe("2026-03-28T01:30:00.000Z");
    expect(iso(nextMatch(halfPastTwo, newYork, t("2026-03-08T00:00:00Z")))).toBe("2026-03-09T06:30:00.000Z");
    // An hourly schedule goes on from 01:00 to 03:00, the hour between being none.
    expect(iso(nextMatch(spec("0 * * * *"), berlin, t("2026-03-29T00:00:00Z")))).toBe("2026-03-29T01:00:00.000Z");
  });

  it("fires once, at the first occurrence, in the hour clocks repeat (fall back), in Berlin and New York", () => {
    const halfPastTwo = spec("30 2 * * *");
    // 02:30 CEST is 00:30Z; 02:30 CET an hour later is the same wall time again, and does not count.
    expect(iso(nextMatch(halfPastTwo, berlin, t("2026-10-24T12:00:00Z")))).toBe("2026-10-25T00:30:00.000Z");
    expect(iso(nextMatch(halfPastTwo, berlin, t("2026-10-25T00:30:00Z")))).toBe("2026-10-26T01:30:00.000Z");
    // During the repeat (02:15 CET, after 02:30 CEST), the last match is that first occurrence.
    expect(iso(lastMatch(halfPastTwo, berlin, t("2026-10-25T01:15:00Z")))).toBe("2026-10-25T00:30:00.000Z");
    expect(iso(lastMatch(halfPastTwo, berlin, t("2026-10-25T01:45:00Z")))).toBe("2026-10-25T00:30:00.000Z");
    // Hourly: 02:00 CEST (00:00Z), then 03:00 CET (02:00Z); 02:00 CET repeats and is skipped.
    expect(iso(nextMatch(spec("0 * * * *"), berlin, t("2026-10-25T00:00:00Z")))).toBe("2026-10-25T02:00:00.000Z");
    const halfPastOne = spec("30 1 * * *");
    expect(iso(nextMatch(halfPastOne, newYork, t("2026-11-01T00:00:00Z")))).toBe("2026-11-01T05:30:00.000Z");
    expect(iso(nextMatch(halfPastOne, newYork, t("2026-11-01T05:30:00Z")))).toBe("2026-11-02T06:30:00.000Z");
    expect(iso(lastMatch(halfPastOne, newYork, t("2026-11-01T06:45:00Z")))).toBe("2026-11-01T05:30:00.000Z");
  });

  it("counts a match at the very instant as the last, and not as the next", () => {
    const eight = spec("0 8 * * *");
    expect(iso(lastMatch(eight, "UTC", t("2026-12-01T08:00:00Z")))).toBe("2026-12-01T08:00:00.000Z");
    expect(iso(nextMatch(eight, "UTC", t("2026-12-01T08:00:00Z")))).toBe("2026-12-02T08:00:00.000Z");
    expect(iso(lastMatch(eight, "UTC", t("2026-12-01T07:59:59Z")))).toBe("2026-11-30T08:00:00.000Z");
  });

  it("finds rare matches within a year, and none beyond", () => {
    const newYear = spec("0 0 1 1 *");
    expect(iso(lastMatch(newYear, berlin, t("2026-12-30T12:00:00Z")))).toBe("2025-12-31T23:00:00.000Z");
    expect(iso(nextMatch(newYear, berlin, t("2026-12-30T12:00:00Z")))).toBe("2026-12-31T23:00:00.000Z");
    // 29 February: 2024 is more than a year back, 2028 more than a year ahead.
    const leapDay = spec("0 0 29 2 *");
    expect(lastMatch(leapDay, "UTC", t("2026-12-01T00:00:00Z"))).toBeNull();
    expect(nextMatch(leapDay, "UTC", t("2026-12-01T00:00:00Z"))).toBeNull();
    expect(nextMatch(spec("0 0 30 2 *"), "UTC", t("2026-12-01T00:00:00Z"))).toBeNull();
  });
});
