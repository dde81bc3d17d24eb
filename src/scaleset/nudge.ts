import type { Env } from "../env";
import type { NudgeReason } from "./scaleset-object";

/**
 * When each scale set's alarm is next due, as its object last told this isolate. While that
 * is comfortably in the future, the alarm has not started, so it will run after any write
 * committed now and see it: a nudge would change nothing, and is skipped. CLOCK_MARGIN_MS
 * covers the difference between this isolate's clock and the object's.
 */
const dueAt = new Map<string, number>();
const CLOCK_MARGIN_MS = 100;
const MAX_REMEMBERED = 1024;

export type NudgeOutcome = "sent" | "skipped" | "failed";

/**
 * Tells the scale set's object that D1 has news for it; call after the write committed.
 * Never rejects: a failed nudge is logged, and the object's periodic alarm finds the job
 * anyway. Each delivery makes its own call (sharing one call between deliveries would await
 * a promise owned by another request, which the runtime may drop when that request ends).
 */
export async function nudgeScaleSet(env: Pick<Env, "SCALE_SET">, scaleSetId: string, reason: NudgeReason): Promise<NudgeOutcome> {
  const due = dueAt.get(scaleSetId);
  if (due !== undefined && Date.now() < due - CLOCK_MARGIN_MS) return "skipped";
  try {
    const next = await env.SCALE_SET.get(env.SCALE_SET.idFromName(scaleSetId)).nudge(scaleSetId, reason);
    dueAt.delete(scaleSetId);
    if (dueAt.size >= MAX_REMEMBERED) dueAt.delete(dueAt.keys().next().value!);
    dueAt.set(scaleSetId, next);
    return "sent";
  } catch (err) {
    dueAt.delete(scaleSetId);
    console.log(
      JSON.stringify({
        event: "scale_set_nudge_failed",
        scale_set: scaleSetId,
        job_id: reason.job_id,
        error: err instanceof Error ? err.message : String(err),
      }),
    );
    return "failed";
  }
}
