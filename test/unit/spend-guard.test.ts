import { describe, expect, it } from "vitest";
import { NO_CREATE_BACKOFF } from "../../src/scaleset/backoff";
import { machineMsInDay, spendGuard, spendGuardStatus, spendGuardText, utcDayStart } from "../../src/scaleset/guards/spend-guard";
import { plan } from "../../src/scaleset/reconcile";
import { planConfig } from "./plan-fixtures";

const HOUR = 3_600_000;
const at = (iso: string) => Date.parse(iso);
// 2026-11-27 at 00:00 UTC, and noon that day.
const DAY = at("2026-11-27T00:00:00Z");
const NOON = at("2026-11-27T12:00:00Z");

describe("spend guard: machine-hours in a UTC day", () => {
  it("starts the day at 00:00 UTC, whatever the time of day", () => {
    expect(utcDayStart(NOON)).toBe(DAY);
    expect(utcDayStart(DAY)).toBe(DAY);
    expect(utcDayStart(DAY - 1)).toBe(at("2026-11-26T00:00:00Z"));
    expect(utcDayStart(at("2026-11-27T23:59:59.999Z"))).toBe(DAY);
  });

  it("counts each machine's overlap with today up to now", () => {
    // Created this morning, still running: 2 h by noon.
    expect(machineMsInDay(at("2026-11-27T10:00:00Z"), null, DAY, NOON)).toBe(2 * HOUR);
    // Created yesterday evening, still running: only today's 12 h count.
    expect(machineMsInDay(at("2026-11-26T20:00:00Z"), null, DAY, NOON)).toBe(12 * HOUR);
    // Created yesterday, deleted at 01:30 today: 1.5 h.
    expect(machineMsInDay(at("2026-11-26T22:00:00Z"), at("2026-11-27T01:30:00Z"), DAY, NOON)).toBe(1.5 * HOUR);
    // Created and deleted today.
    expect(machineMsInDay(at("2026-11-27T03:00:00Z"), at("2026-11-27T03:45:00Z"), DAY, NOON)).toBe(0.75 * HOUR);
    // Deleted before today began: nothing.
    expect(machineMsInDay(at("2026-11-26T08:00:00Z"), at("2026-11-26T23:00:00Z"), DAY, NOON)).toBe(0);
    // Created just now: nothing yet.
    expect(machineMsInDay(NOON, null, DAY, NOON)).toBe(0);
  });

  it("holds once machine-hours today reach the cap, and resumes at the next 00:00 UTC", () => {
    const under = spendGuard({ capHours: 12, usedMs: 11.9 * HOUR, resetAt: null, now: NOON });
    expect(under).toMatchObject({ holding: false, lifted: false, dayStart: DAY, resumesAt: DAY + 24 * HOUR });
    const reached = spendGuard({ capHours: 12, usedMs: 12 * HOUR, resetAt: null, now: NOON });
    expect(reached).toMatchObject({ holding: true, usedHours: 12, resumesAt: at("2026-11-28T00:00:00Z") });
    // No cap, no guard.
    expect(spendGuard({ capHours: null, usedMs: 1_000 * HOUR, resetAt: null, now: NOON }).holding).toBe(false);
  });

  it("a reset lifts it for the rest of that UTC day only", () => {
    const resetAt = at("2026-11-27T09:00:00Z");
    expect(spendGuard({ capHours: 12, usedMs: 20 * HOUR, resetAt, now: NOON })).toMatchObject({ holding: false, lifted: true });
    // The next day, the same cap reached again holds again: yesterday's reset counts no more.
    const tomorrow = at("2026-11-28T15:00:00Z");
    expect(spendGuard({ capHours: 12, usedMs: 13 * HOUR, resetAt, now: tomorrow })).toMatchObject({ holding: true, lifted: false });
    // A reset from yesterday does nothing today.
    expect(spendGuard({ capHours: 12, usedMs: 13 * HOUR, resetAt: DAY - 1, now: NOON }).holding).toBe(true);
  });

  it("says what holds and until when", () => {
    const text = (usedHours: number, resetAt: number | null = null) =>
      spendGuardText(spendGuard({ capHours: 12, usedMs: usedHours * HOUR, resetAt, now: NOON }));
    expect(text(12.34)).toBe("spend guard: 12.3 of 12 machine-hours today; creating resumes at 00:00 UTC or after a reset");
    expect(text(3.06)).toBe("spend guard: 3 of 12 machine-hours today");
    // Never "12 of 12" while still under the cap.
    expect(text(11.99)).toBe("spend guard: 11.9 of 12 machine-hours today");
    expect(text(15, at("2026-11-27T11:00:00Z"))).toBe("spend guard: 15 of 12 machine-hours today; lifted by a reset until 00:00 UTC");
    expect(spendGuardText(spendGuard({ capHours: null, usedMs: 0, resetAt: null, now: NOON }))).toBeNull();
    // Small caps still read: two significant digits below 10 h.
    const small = spendGuardText(spendGuard({ capHours: 0.01, usedMs: 0.0333 * HOUR, resetAt: null, now: NOON }));
    expect(small).toBe("spend guard: 0.033 of 0.01 machine-hours today; creating resumes at 00:00 UTC or after a reset");
    expect(spendGuardText(spendGuard({ capHours: 1.5, usedMs: 0.29 * HOUR, resetAt: null, now: NOON }))).toBe(
      "spend guard: 0.29 of 1.5 machine-hours today",
    );
  });

  it("shows in the status as the last pass found it", () => {
    const g = spendGuard({ capHours: 12, usedMs: 12.3 * HOUR, resetAt: null, now: NOON });
    expect(spendGuardStatus({ ...g, at: NOON })).toEqual({
      cap_machine_hours: 12,
      used_machine_hours: 12.3,
      holding: true,
      lifted_by_reset: false,
      resumes_at: "2026-11-28T00:00:00.000Z",
      reset_at: null,
      at: "2026-11-27T12:00:00.000Z",
      message: "spend guard: 12.3 of 12 machine-hours today; creating resumes at 00:00 UTC or after a reset",
    });
    expect(spendGuardStatus(null)).toBeNull();
  });
});

describe("spend guard: in the planner", () => {
  const snapshot = (spendCapReached: boolean) => ({
    config: planConfig(),
    instances: [],
    queuedJobs: 3,
    createBackoff: NO_CREATE_BACKOFF,
    spendCapReached,
    now: NOON,
  });

  it("creates nothing while the guard holds, and says why", () => {
    const held = plan(snapshot(true));
    expect(held.actions).toEqual([]);
    expect(held.summary).toMatchObject({ desired: 3, blocked: "spend_cap" });
    expect(plan(snapshot(false)).actions).toEqual([{ type: "create", count: 3 }]);
  });
});
