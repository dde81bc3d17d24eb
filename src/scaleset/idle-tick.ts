import type { PlanSummary } from "./reconcile";

/** How long a scale set idles before it ticks at its quiet pace: no machine for this long. */
export const QUIET_AFTER_MS = 60 * 60_000;

/**
 * How long until a scale set's next periodic tick. The tick is a safety net: jobs, runner
 * reports and edits nudge the object at once, and whatever waits on a deadline (a boot, a
 * backoff, a schedule) arms its own timer. A scale set with nothing live, nothing queued and
 * nothing wanted has only its orphan check left to do on a timer, so it wakes every
 * `idleTickMs` (5 minutes by default) instead of every `tickMs`: each alarm is a Durable Object
 * request and a row written, and at 30 s an idle scale set spent more than a busy day's jobs.
 *
 * Once it has had no machine for QUIET_AFTER_MS (`lastDeletedAt`; null: it never had one) it
 * wakes every `quietTickMs` (30 minutes): a machine nobody knows of comes from a create whose
 * answer was lost, which an hour of checks every 5 minutes has already looked for. Each tick it
 * keeps was also an orphan check written to its storage.
 */
export function tickDelay(
  summary: Pick<PlanSummary, "live" | "queued" | "desired"> | null,
  acted: boolean,
  settings: { tickMs: number; idleTickMs: number; quietTickMs: number },
  quiet: { lastDeletedAt: number | null; now: number },
): number {
  const idle = summary !== null && !acted && summary.live === 0 && summary.queued === 0 && summary.desired === 0;
  if (!idle) return settings.tickMs;
  const quietFor = quiet.lastDeletedAt === null ? Number.POSITIVE_INFINITY : quiet.now - quiet.lastDeletedAt;
  return quietFor >= QUIET_AFTER_MS ? settings.quietTickMs : settings.idleTickMs;
}
