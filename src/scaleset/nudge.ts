import type { Env } from "../env";
import type { NudgeReason } from "./scaleset-object";

/**
 * Tells the scale set's object that D1 has news for it; call after the write committed.
 * Never rejects: a failed nudge is logged, and the object's periodic alarm finds the job
 * anyway. Each delivery makes its own call. Sharing one call between deliveries would
 * await a promise owned by another request, which the runtime may drop when that request
 * ends; the object coalesces bursts instead (ScaleSet.nudge).
 */
export async function nudgeScaleSet(env: Pick<Env, "SCALE_SET">, scaleSetId: string, reason: NudgeReason): Promise<void> {
  try {
    await env.SCALE_SET.get(env.SCALE_SET.idFromName(scaleSetId)).nudge(scaleSetId, reason);
  } catch (err) {
    console.log(
      JSON.stringify({
        event: "scale_set_nudge_failed",
        scale_set: scaleSetId,
        job_id: reason.job_id,
        error: err instanceof Error ? err.message : String(err),
      }),
    );
  }
}
