/**
 * `--schedule 'name=workday,cron=0 8 * * 1-5,tz=Europe/Berlin,min-idle=5,prewarm'`: one entry of a
 * scale set's min idle schedule on the command line, and how `scaleset show` prints one. A cron
 * has commas of its own (`0 8 * * 1,3,5`), so the text is cut only before a `key=`. Pure.
 */
import type { components } from "./api-types.ts";
import { UsageError } from "./errors.ts";

export type ScheduleEntry = components["schemas"]["MinIdleScheduleEntry"];

const KEYS: Record<string, keyof ScheduleEntry> = {
  name: "name",
  cron: "cron",
  tz: "timezone",
  timezone: "timezone",
  "min-idle": "min_idle_runners",
  min_idle_runners: "min_idle_runners",
  prewarm: "prewarm",
};
// Before `key=` (a cron has no `=`) or the bare flag `prewarm`.
const SPLIT = /,\s*(?=[A-Za-z_-]+\s*=|prewarm\s*(?:,|$))/;

export const SCHEDULE_FORMAT = "name=NAME,cron=CRON,tz=ZONE,min-idle=N[,prewarm]";

export function parseScheduleOption(text: string): ScheduleEntry {
  const entry: Partial<ScheduleEntry> = {};
  for (const part of text.split(SPLIT)) {
    const eq = part.indexOf("=");
    const key = (eq < 0 ? part : part.slice(0, eq)).trim();
    const value = eq < 0 ? undefined : part.slice(eq + 1).trim();
    const field = KEYS[key];
    if (!field) throw new UsageError(`--schedule: unknown key '${key}' in '${text}' (write ${SCHEDULE_FORMAT})`);
    if (field in entry) throw new UsageError(`--schedule: '${key}' given twice in '${text}'`);
    if (field === "prewarm") {
      if (value !== undefined && value !== "true" && value !== "false")
        throw new UsageError(`--schedule: prewarm is true or false, not '${value}'`);
      entry.prewarm = value !== "false";
    } else if (value === undefined || value === "") {
      throw new UsageError(`--schedule: '${key}' needs a value (write ${SCHEDULE_FORMAT})`);
    } else if (field === "min_idle_runners") {
      if (!/^\d{1,15}$/.test(value)) throw new UsageError(`--schedule: min-idle is a whole number, not '${value}'`);
      entry.min_idle_runners = Number(value);
    } else entry[field] = value;
  }
  const missing = (["name", "cron", "timezone", "min_idle_runners"] as const).filter((f) => entry[f] === undefined);
  if (missing.length) {
    const names = missing.map((f) => (f === "timezone" ? "tz" : f === "min_idle_runners" ? "min-idle" : f));
    throw new UsageError(`--schedule: missing ${names.join(", ")} in '${text}' (write ${SCHEDULE_FORMAT})`);
  }
  return { prewarm: false, ...entry } as ScheduleEntry;
}

/** One entry as `scaleset show` prints it. */
export const scheduleLine = (e: ScheduleEntry) =>
  `${e.name}: '${e.cron}' ${e.timezone} min-idle ${e.min_idle_runners}${e.prewarm ? " prewarm" : ""}`;
