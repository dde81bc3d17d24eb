/**
 * Wall-clock time in an IANA time zone, from the runtime's own zone data (Intl.DateTimeFormat):
 * Workers and Node both carry it, so no table of ours goes stale.
 *
 * A wall time is written as milliseconds "as if UTC" (Date.UTC of the local fields), which makes
 * local calendar arithmetic plain integer arithmetic. Turning one back into an instant is where
 * daylight saving time bites, and the rule here is:
 * - a wall time that does not exist (the hour skipped when clocks go forward) has no instant;
 * - a wall time that happens twice (the hour repeated when clocks go back) is taken at its first
 *   occurrence only, so a schedule fires once, not twice, that night.
 */

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

const formatters = new Map<string, Intl.DateTimeFormat>();

/** One formatter per zone: building one costs far more than using it. Throws RangeError for an unknown zone. */
function formatter(zone: string): Intl.DateTimeFormat {
  let f = formatters.get(zone);
  if (!f) {
    f = new Intl.DateTimeFormat("en-US", {
      timeZone: zone,
      // h23: midnight is 0, never the 24 that hour12: false gives in some runtimes.
      hourCycle: "h23",
      year: "numeric",
      month: "numeric",
      day: "numeric",
      hour: "numeric",
      minute: "numeric",
      second: "numeric",
    });
    formatters.set(zone, f);
  }
  return f;
}

/** Why a time zone is refused, or null when the runtime knows it. */
export function timeZoneProblem(zone: string): string | null {
  // Fixed offsets are not zones (and only some runtimes take them): the zone's name says when its clocks change.
  if (/^[+-]/.test(zone)) return `'${zone}' is an offset, not a time zone: use an IANA name such as Europe/Berlin or UTC`;
  try {
    formatter(zone);
    return null;
  } catch (err) {
    if (err instanceof RangeError) return `unknown time zone '${zone}': use an IANA name such as Europe/Berlin, America/New_York or UTC`;
    throw err;
  }
}

/** The local wall time at instant `t` (seconds kept, milliseconds dropped), as ms "as if UTC". */
export function wallTime(zone: string, t: number): number {
  const parts = formatter(zone).formatToParts(t);
  const n = (type: Intl.DateTimeFormatPartTypes) => Number(parts.find((p) => p.type === type)?.value);
  const hour = n("hour") % 24;
  return Date.UTC(n("year"), n("month") - 1, n("day"), hour, n("minute"), n("second"));
}

/** The zone's offset from UTC at instant `t` (wall minus instant), in ms. */
export function zoneOffset(zone: string, t: number): number {
  return wallTime(zone, t) - Math.floor(t / 1000) * 1000;
}

/**
 * The first instant whose wall time is `wall`, or null when clocks skip it. A zone's offset
 * changes at most once within a day either side of any instant, so the instant lies under the
 * offset of a day before or a day after; each candidate is kept only if the zone agrees.
 */
export function instantOfWall(zone: string, wall: number): number | null {
  const before = zoneOffset(zone, wall - DAY);
  const after = zoneOffset(zone, wall + DAY);
  let first: number | null = null;
  for (const offset of before === after ? [before] : [before, after]) {
    const t = wall - offset;
    if (zoneOffset(zone, t) === offset && (first === null || t < first)) first = t;
  }
  return first;
}
