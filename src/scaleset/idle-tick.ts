import type { PlanSummary } from "./reconcile";

/**
 * How long until a scale set's next periodic tick. The tick is a safety net: jobs, runner
 * reports and edits nudge the object at once, and whatever waits on a deadline (a boot, a
 * backoff, a schedule) arms its own timer. A scale set with nothing live, nothing queued and
 * nothing wanted has only its orphan check left to do on a timer, so it wakes every
 * `idleTickMs` (5 minutes by default) instead of every `tickMs`: each alarm is a Durable Object
 * request and a row written, and at 30 s an idle scale set spent more than a busy day's jobs.
 */
export function tickDelay(
  summary: Pick<PlanSummary, "live" | "queued" | "desired"> | null,
  acted: boolean,
  settings: { tickMs: number; idleTickMs: number },
): number {
  const idle = summary !== null && !acted && summary.live === 0 && summary.queued === 0 && summary.desired === 0;
  return idle ? settings.idleTickMs : settings.tickMs;
}
