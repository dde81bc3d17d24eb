/**
 * The spend guard: a scale set's optional cap of machine-hours a UTC day. Once its instances
 * have run that long today, it creates nothing more until the next UTC day, or until an admin
 * resets the guard (`spend_reset_at`), which lifts it for the rest of that day. Pure: the
 * machine time comes from the reconcile snapshot (db/scaleset/snapshot-store.ts sums it in SQL).
 */

import type { SpendGuardStatus } from "../object/status-types";

const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;

/** The start of the UTC day `at` falls in (unix time has no leap seconds: every day is 86,400 s). */
export const utcDayStart = (at: number): number => Math.floor(at / DAY_MS) * DAY_MS;

/**
 * An instance's machine time within the UTC day that starts at `dayStart`, up to `now`: the
 * overlap of [created, ended or now] with [dayStart, now]. The definition the snapshot's SQL
 * sums (db/scaleset/snapshot-store.ts, `machine_ms_today`); the store's test checks the two agree.
 */
export function machineMsInDay(createdAt: number, endedAt: number | null, dayStart: number, now: number): number {
  const end = Math.min(endedAt ?? now, now);
  return Math.max(0, end - Math.max(createdAt, dayStart));
}

export interface SpendGuardInput {
  /** The cap in machine-hours a UTC day; null: no cap. */
  capHours: number | null;
  /** Machine time of the scale set's instances so far today (ms). */
  usedMs: number;
  /** When an admin last reset the guard; null: never. */
  resetAt: number | null;
  now: number;
}

export interface SpendGuard {
  capHours: number | null;
  usedHours: number;
  /** Creating is stopped: the cap is reached and no reset today lifted it. */
  holding: boolean;
  /** A reset today lifted the guard although the cap is reached. */
  lifted: boolean;
  dayStart: number;
  /** When the day ends and the guard lets go by itself. */
  resumesAt: number;
  resetAt: number | null;
}

export function spendGuard(input: SpendGuardInput): SpendGuard {
  const dayStart = utcDayStart(input.now);
  const usedHours = input.usedMs / HOUR_MS;
  const reached = input.capHours !== null && usedHours >= input.capHours;
  const resetToday = input.resetAt !== null && input.resetAt >= dayStart && input.resetAt <= input.now;
  return {
    capHours: input.capHours,
    usedHours,
    holding: reached && !resetToday,
    lifted: reached && resetToday,
    dayStart,
    resumesAt: dayStart + DAY_MS,
    resetAt: input.resetAt,
  };
}

/**
 * Hours for people: one decimal from 10 h up, two significant digits below (a small cap still
 * reads), always rounded down so "12 of 12" never shows while the guard does not hold yet.
 */
function hours(h: number): string {
  if (h <= 0) return "0";
  const decimals = h >= 10 ? 1 : Math.max(1, 1 - Math.floor(Math.log10(h)));
  const scale = 10 ** decimals;
  // The epsilon keeps binary fractions (0.29 * 100 = 28.999…) from losing a digit.
  return String(Math.floor(h * scale + 1e-9) / scale);
}

/** The guard in a sentence for the status and the dashboard; null when the scale set has no cap. */
export function spendGuardText(g: SpendGuard): string | null {
  if (g.capHours === null) return null;
  const used = `spend guard: ${hours(g.usedHours)} of ${hours(g.capHours)} machine-hours today`;
  if (g.holding) return `${used}; creating resumes at 00:00 UTC or after a reset`;
  if (g.lifted) return `${used}; lifted by a reset until 00:00 UTC`;
  return used;
}

export function spendGuardStatus(kept: (SpendGuard & { at: number }) | null): SpendGuardStatus | null {
  if (!kept || kept.capHours === null) return null;
  return {
    cap_machine_hours: kept.capHours,
    used_machine_hours: Math.round(kept.usedHours * 1000) / 1000,
    holding: kept.holding,
    lifted_by_reset: kept.lifted,
    resumes_at: new Date(kept.resumesAt).toISOString(),
    reset_at: kept.resetAt === null ? null : new Date(kept.resetAt).toISOString(),
    at: new Date(kept.at).toISOString(),
    message: spendGuardText(kept)!,
  };
}
