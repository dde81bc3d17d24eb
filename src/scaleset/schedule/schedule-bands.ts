import type { MinIdleScheduleEntry } from "../../db/scaleset/schema";
import { evaluateMinIdle } from "./min-idle-schedule";

/** A stretch of time in which one schedule entry set min idle (the dashboard draws it as a band). */
export interface ScheduleBand {
  from: number;
  to: number;
  name: string;
  minIdle: number;
}

/** Enough for a day of entries changing every few minutes; a chart could show no more anyway. */
const MAX_BANDS = 200;

/**
 * Which entry held min idle when, over [from, to]: the evaluation at `from`, then again at each
 * `until` it names. Stretches where the scale set's own min idle held are left out (no band).
 * Pure, from the same rules the object plans with (min-idle-schedule.ts); the lead is today's,
 * so a prewarm band is drawn with the boot time the scale set has now.
 */
export function scheduleBands(input: {
  entries: readonly MinIdleScheduleEntry[];
  minIdleRunners: number;
  leadMs: number;
  from: number;
  to: number;
}): ScheduleBand[] {
  const bands: ScheduleBand[] = [];
  if (!input.entries.length) return bands;
  let t = input.from;
  while (t < input.to && bands.length < MAX_BANDS) {
    const now = evaluateMinIdle({ now: t, entries: input.entries, minIdleRunners: input.minIdleRunners, leadMs: input.leadMs });
    const end = Math.min(now.until ?? input.to, input.to);
    if (now.entry) {
      const last = bands.at(-1);
      // The same entry matching again (each weekday morning) continues its band.
      if (last && last.to === t && last.name === now.entry.name && last.minIdle === now.minIdle) last.to = end;
      else bands.push({ from: t, to: end, name: now.entry.name, minIdle: now.minIdle });
    }
    if (end <= t) break;
    t = end;
  }
  return bands;
}
