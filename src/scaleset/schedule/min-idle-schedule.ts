import type { MinIdleScheduleEntry } from "../../db/scaleset/schema";
import { parseCron } from "./cron";
import { lastMatch, nextMatch } from "./cron-matches";
import { timeZoneProblem } from "./zone-time";

/**
 * A scale set's min idle on a schedule (issue 27). Each entry says: from each time `cron`
 * matches in `timezone`, keep `min_idle_runners` idle. The latest entry that matched at or before
 * now wins; when none matched within the search window (a year, cron-matches.ts), the scale set's
 * own `min_idle_runners` holds. So a working day is two entries: one that raises min idle in the
 * morning and one that lowers it in the evening.
 *
 * A `prewarm` entry takes effect one boot time (`leadMs`) before its cron time, so the runners it
 * asks for are idle when the time comes. Ties (two entries taking effect at the same instant) go
 * to the entry listed later. Pure: the object passes its clock and the scale set's entries.
 */

export interface MinIdleEvaluation {
  /** The min idle to plan with now. */
  minIdle: number;
  /** The entry it comes from; null: the scale set's own min idle. */
  entry: MinIdleScheduleEntry | null;
  /** When that entry took effect (its cron time, less the lead for a prewarm entry); null for the scale set's own. */
  since: number | null;
  /** When the next entry takes effect (the same lead applied): min idle may change then. Null: no entry matches within the window. */
  until: number | null;
  /** The lead prewarm entries were shifted by. */
  leadMs: number;
}

export function evaluateMinIdle(input: {
  now: number;
  entries: readonly MinIdleScheduleEntry[];
  /** The scale set's own min idle. */
  minIdleRunners: number;
  /** The scale set's boot time (create-pacing.ts bootLead): how far ahead a prewarm entry starts. */
  leadMs: number;
}): MinIdleEvaluation {
  const { now, leadMs } = input;
  let winner: { entry: MinIdleScheduleEntry; at: number } | null = null;
  let until: number | null = null;
  for (const entry of input.entries) {
    // Entries are validated when written; one that no longer parses (or a zone the runtime
    // dropped) is left out rather than stopping the scale set.
    const parsed = parseCron(entry.cron);
    if (!parsed.ok || timeZoneProblem(entry.timezone) !== null) continue;
    const lead = entry.prewarm ? leadMs : 0;
    // A prewarm entry matches `lead` early: its cron time is at most now + lead.
    const last = lastMatch(parsed.spec, entry.timezone, now + lead);
    if (last !== null && (winner === null || last - lead >= winner.at)) winner = { entry, at: last - lead };
    const next = nextMatch(parsed.spec, entry.timezone, now + lead);
    if (next !== null && (until === null || next - lead < until)) until = next - lead;
  }
  return winner
    ? { minIdle: winner.entry.min_idle_runners, entry: winner.entry, since: winner.at, until, leadMs }
    : { minIdle: input.minIdleRunners, entry: null, since: null, until, leadMs };
}
