import { type CronSpec, dayMatches } from "./cron";
import { instantOfWall, wallTime, zoneOffset } from "./zone-time";

/**
 * When a cron expression matches in a time zone: the last match at or before an instant and the
 * first after it. The search walks local calendar days (plain arithmetic on wall times, see
 * zone-time.ts), skips days the day fields refuse, and within a day tries only the hours and
 * minutes the spec allows, nearest first; only those candidates cost a time zone conversion.
 * A spec that matches every minute costs a few conversions, one that matches once a year a year
 * of cheap day checks. Looks a year either way (366 days): a spec with no match in that window
 * has none for our purposes (30 February, or 29 February most years).
 */

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

export const SEARCH_DAYS = 366;

/** The spec's wall times from `start` (inclusive), one direction, as far as SEARCH_DAYS. */
function* walls(spec: CronSpec, start: number, direction: 1 | -1): Generator<number> {
  const firstDay = Math.floor(start / DAY) * DAY;
  const startMinute = Math.floor((start - firstDay) / MINUTE);
  const hours = direction === 1 ? spec.hours : [...spec.hours].reverse();
  const minutes = direction === 1 ? spec.minutes : [...spec.minutes].reverse();
  for (let d = 0; d <= SEARCH_DAYS; d++) {
    const day = firstDay + direction * d * DAY;
    const date = new Date(day);
    if (!dayMatches(spec, date.getUTCMonth() + 1, date.getUTCDate(), date.getUTCDay())) continue;
    for (const h of hours) {
      for (const m of minutes) {
        const minuteOfDay = h * 60 + m;
        // On the first day, only minutes on the near side of `start`.
        if (d === 0 && (direction === 1 ? minuteOfDay < startMinute : minuteOfDay > startMinute)) continue;
        yield day + minuteOfDay * MINUTE;
      }
    }
  }
}

/** Wall time at `t`, cut to its minute: cron has no finer grain. */
const wallMinute = (zone: string, t: number) => Math.floor(wallTime(zone, t) / MINUTE) * MINUTE;

/** The latest instant at or before `t` at which the spec matches in `zone`; null if none within SEARCH_DAYS. */
export function lastMatch(spec: CronSpec, zone: string, t: number): number | null {
  // After clocks went back, wall times a little ahead of now had their first (and only counted)
  // occurrence before it: start the walk that much later. (Offsets change at most once a day.)
  const repeated = Math.max(0, zoneOffset(zone, t - DAY) - zoneOffset(zone, t));
  // The first occurrences of wall times come in the same order as the wall times, so walking
  // back, the first candidate not after `t` is the latest.
  for (const wall of walls(spec, wallMinute(zone, t) + repeated, -1)) {
    const at = instantOfWall(zone, wall);
    if (at !== null && at <= t) return at;
  }
  return null;
}

/** The earliest instant after `t` at which the spec matches in `zone`; null if none within SEARCH_DAYS. */
export function nextMatch(spec: CronSpec, zone: string, t: number): number | null {
  // No wall time before now's can have its first occurrence after now.
  for (const wall of walls(spec, wallMinute(zone, t), 1)) {
    const at = instantOfWall(zone, wall);
    if (at !== null && at > t) return at;
  }
  return null;
}
