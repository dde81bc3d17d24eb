import { z } from "@hono/zod-openapi";
import { MAX_SCHEDULE_ENTRIES, scheduleProblems } from "../scaleset/schedule/schedule-validation";

// Min idle on a schedule as the admin API takes and shows it (docs/scale-sets.md#schedules;
// scaleset/schedule has the rules). Entries in and out share their fields, so each is described once.

const ScheduleEntryFields = {
  name: z
    .string()
    .regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/, "1-64 letters, digits, '_', '.' and '-', starting with a letter or digit")
    .openapi({ description: "What the status and the logs call this entry", example: "workday" }),
  cron: z.string().min(1).max(200).openapi({
    description:
      "When the entry takes effect: minute hour day-of-month month day-of-week (lists, ranges, steps, `*`, JAN–DEC, SUN–SAT), in `timezone`",
    example: "0 8 * * 1-5",
  }),
  timezone: z
    .string()
    .min(1)
    .max(64)
    .openapi({ description: "An IANA time zone; daylight saving time is followed", example: "Europe/Berlin" }),
  min_idle_runners: z.int().min(0).max(10_000).openapi({ description: "Idle runners to keep from then on (at most max_runners)" }),
};
const PREWARM_DESCRIPTION =
  "Take effect one boot time early (boot_time_seconds, else the p90 of recent boots, else 30 s), so the runners are idle when the time comes";
const ScheduleEntryInput = z.strictObject({
  ...ScheduleEntryFields,
  prewarm: z.boolean().default(false).openapi({ description: PREWARM_DESCRIPTION }),
});
export const ScheduleEntrySchema = z
  .object({ ...ScheduleEntryFields, prewarm: z.boolean().openapi({ description: PREWARM_DESCRIPTION }) })
  .openapi("MinIdleScheduleEntry");
export const Schedules = z
  .array(ScheduleEntryInput)
  .max(MAX_SCHEDULE_ENTRIES, `at most ${MAX_SCHEDULE_ENTRIES} entries`)
  .superRefine((entries, ctx) => {
    for (const p of scheduleProblems(entries)) ctx.addIssue({ code: "custom", path: p.path, message: p.message });
  })
  .openapi({
    description:
      "Min idle on a schedule: from each time an entry's cron matches, its min_idle_runners holds until another entry's matches (the latest wins; min_idle_runners while none has matched within a year). On update the list replaces the old one; [] removes it",
  });
