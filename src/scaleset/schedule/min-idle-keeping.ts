import type { ScaleSetRecord } from "../../db/scaleset/snapshot-store";
import { logEvent as log } from "../../observability/log";
import { bootLead } from "../jit/create-pacing";
import type { MinIdleScheduleState, ObjectState } from "../object/object-state";
import type { MinIdleScheduleStatus } from "../object/status-types";
import { evaluateMinIdle, type MinIdleEvaluation } from "./min-idle-schedule";

const DAY = 24 * 60 * 60_000;

/**
 * The scale set object's side of min idle schedules (min-idle-schedule.ts has the rule): each
 * pass asks it for the min idle to plan with. It keeps what it found in the object's state for
 * the status, logs `min_idle_scheduled` once per change (not once per pass), and its `until` is
 * when the object's alarm must wake so the next entry takes effect on time, with no Worker cron.
 *
 * An evaluation holds until its `until`: no entry can match before then, so the same schedule,
 * min idle and boot time give the same answer. Passes in between (a burst makes many) reuse it
 * instead of walking the calendar again.
 */
export class MinIdleKeeper {
  private last: { key: string; at: number; result: MinIdleEvaluation } | null = null;

  constructor(private readonly state: ObjectState) {}

  evaluate(ss: ScaleSetRecord, now: number): MinIdleEvaluation {
    const leadMs = bootLead(ss.bootTimeSeconds, this.state.bootSamples).ms;
    const key = JSON.stringify([ss.schedules, ss.minIdleRunners, leadMs]);
    const last = this.last;
    // (With no `until` nothing changes but the search window; a day is soon enough to look again.)
    const holds = last && last.key === key && now >= last.at && now < (last.result.until ?? last.at + DAY);
    const result = holds ? last.result : evaluateMinIdle({ now, entries: ss.schedules, minIdleRunners: ss.minIdleRunners, leadMs });
    if (!holds) this.last = { key, at: now, result };
    this.keep(ss.id, result);
    return result;
  }

  /**
   * Stores the evaluation and arms its timer when it differs from the last one (writes per change,
   * not per pass), and logs a change of min idle or entry.
   */
  private keep(scaleSetId: string, result: MinIdleEvaluation): void {
    const next: MinIdleScheduleState = {
      minIdle: result.minIdle,
      entry: result.entry?.name ?? null,
      since: result.since,
      until: result.until,
      leadMs: result.leadMs,
    };
    const before = this.state.minIdleSchedule;
    if (before && JSON.stringify(before) === JSON.stringify(next)) return;
    this.state.minIdleSchedule = next;
    // The alarm wakes when the next entry takes effect. A pass at or after `until` always finds a
    // later one (or none), so the timer never stays in the past.
    this.state.setTimer("schedule", next.until);
    const changed = before ? before.minIdle !== next.minIdle || before.entry !== next.entry : next.entry !== null;
    // Only what a schedule did: an admin changing min_idle_runners is in the audit trail already.
    if (!changed || (next.entry === null && (before?.entry ?? null) === null)) return;
    const iso = (t: number | null) => (t === null ? null : new Date(t).toISOString());
    log({
      event: "min_idle_scheduled",
      scale_set: scaleSetId,
      min_idle: next.minIdle,
      previous_min_idle: before?.minIdle ?? null,
      schedule: next.entry,
      previous_schedule: before?.entry ?? null,
      since: iso(next.since),
      until: iso(next.until),
      prewarm_lead_ms: result.entry?.prewarm ? next.leadMs : 0,
    });
  }
}

export function minIdleScheduleStatus(s: MinIdleScheduleState | null): MinIdleScheduleStatus | null {
  if (!s) return null;
  const iso = (t: number | null) => (t === null ? null : new Date(t).toISOString());
  return { min_idle: s.minIdle, entry: s.entry, since: iso(s.since), until: iso(s.until), prewarm_lead_ms: s.leadMs };
}
