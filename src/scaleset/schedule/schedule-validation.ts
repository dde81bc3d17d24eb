import type { MinIdleScheduleEntry } from "../../db/scaleset/schema";
import { parseCron } from "./cron";
import { timeZoneProblem } from "./zone-time";

/**
 * What is wrong with a scale set's schedule, field by field, for the admin API to refuse it
 * with: a cron that does not parse, a zone the runtime does not know, two entries of one name, or
 * an entry that asks for more idle runners than the scale set may have. (The API's schema caps the
 * list at MAX_SCHEDULE_ENTRIES.)
 * Paths are relative to the list (`0.cron`); the API prefixes `schedules.`.
 */

/** More entries than this is a schedule nobody can read; a working week needs a handful. */
export const MAX_SCHEDULE_ENTRIES = 20;

export interface ScheduleProblem {
  path: (string | number)[];
  message: string;
}

type EntryShape = Pick<MinIdleScheduleEntry, "name" | "cron" | "timezone">;

/** Problems of the entries on their own and with each other (not against the scale set's max_runners). */
export function scheduleProblems(entries: readonly EntryShape[]): ScheduleProblem[] {
  const problems: ScheduleProblem[] = [];
  const seen = new Set<string>();
  for (const [i, entry] of entries.entries()) {
    const parsed = parseCron(entry.cron);
    if (!parsed.ok) problems.push({ path: [i, "cron"], message: `invalid cron '${entry.cron}': ${parsed.error}` });
    const zone = timeZoneProblem(entry.timezone);
    if (zone) problems.push({ path: [i, "timezone"], message: zone });
    if (seen.has(entry.name)) problems.push({ path: [i, "name"], message: `two entries are named '${entry.name}': names must differ` });
    seen.add(entry.name);
  }
  return problems;
}

/** Entries whose min idle is above the scale set's max_runners. */
export function schedulesAboveMax(
  entries: readonly Pick<MinIdleScheduleEntry, "name" | "min_idle_runners">[],
  maxRunners: number,
): ScheduleProblem[] {
  return entries.flatMap((entry, i) =>
    entry.min_idle_runners > maxRunners
      ? [
          {
            path: [i, "min_idle_runners"],
            message: `schedule '${entry.name}' asks for ${entry.min_idle_runners} idle runners, above max_runners (${maxRunners})`,
          },
        ]
      : [],
  );
}
