/**
 * Axes for the dashboard's charts: where the ticks go and what they say. Pure.
 */

export interface Tick {
  value: number;
  label: string;
}

/** "45s", "2m", "1h", "1h30m": short enough for an axis. */
export function shortDuration(seconds: number): string {
  const s = Math.round(seconds);
  if (s < 60) return `${s}s`;
  if (s < 3600) return s % 60 ? `${Math.floor(s / 60)}m${s % 60}s` : `${s / 60}m`;
  const h = Math.floor(s / 3600);
  const m = Math.round((s % 3600) / 60);
  return m ? `${h}h${m}m` : `${h}h`;
}

/** Steps a duration axis may take (seconds): each a round number on a clock. */
const DURATION_STEPS = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400];

/**
 * Ticks from 0 to at least `max` with at most `most` steps: each a multiple of a round step (1, 2
 * or 5 × 10ⁿ for counts, whole numbers only; a clock's round figures for durations in seconds).
 * The last tick is the axis' top.
 */
export function valueTicks(max: number, kind: "count" | "duration", most = 4): Tick[] {
  const top = Math.max(max, 1);
  let step: number;
  if (kind === "duration") {
    step = DURATION_STEPS.find((s) => top / s <= most) ?? Math.ceil(top / most / 86400) * 86400;
  } else {
    step = 1;
    for (let p = 1; ; p *= 10) {
      const found = [1, 2, 5].map((m) => m * p).find((s) => top / s <= most);
      if (found !== undefined) {
        step = found;
        break;
      }
    }
  }
  const n = Math.ceil(top / step);
  return Array.from({ length: n + 1 }, (_, i) => {
    const value = i * step;
    return { value, label: kind === "duration" ? shortDuration(value) : String(value) };
  });
}

/** Ticks on whole UTC hours every `everyHours` within [from, to], labelled "HH:00". */
export function hourTicks(from: number, to: number, everyHours = 3): Tick[] {
  const step = everyHours * 3_600_000;
  const ticks: Tick[] = [];
  for (let t = Math.ceil(from / step) * step; t <= to; t += step) {
    ticks.push({ value: t, label: `${new Date(t).toISOString().slice(11, 13)}:00` });
  }
  return ticks;
}
