import type { Env } from "../env";
import { errorText, logEvent } from "../observability/log";

/** The ScaleSet object of a scale set: one per scale set id, wherever it is called from. */
export function scaleSetObject(env: Pick<Env, "SCALE_SET">, scaleSetId: string) {
  return env.SCALE_SET.get(env.SCALE_SET.idFromName(scaleSetId));
}

/**
 * Wakes a scale set's object. Best effort by design: whatever prompted it is already in D1,
 * and the object's periodic tick finds it if the nudge is lost.
 */
export async function nudgeScaleSet(env: Pick<Env, "SCALE_SET">, scaleSetId: string): Promise<boolean> {
  try {
    await scaleSetObject(env, scaleSetId).nudge(scaleSetId);
    return true;
  } catch (e) {
    logEvent({ event: "nudge_failed", scale_set: scaleSetId, error: errorText(e) });
    return false;
  }
}
