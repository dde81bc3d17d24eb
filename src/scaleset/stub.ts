import type { Env } from "../env";
import { countedStub } from "../lib/invocation-cost";
import { errorText, logEvent } from "../observability/log";

/** The ScaleSet object of a scale set: one per scale set id, wherever it is called from. */
export function scaleSetObject(env: Pick<Env, "SCALE_SET">, scaleSetId: string) {
  // Each call is counted as a subrequest of the caller's invocation (lib/invocation-cost.ts).
  return countedStub(env.SCALE_SET.get(env.SCALE_SET.idFromName(scaleSetId)));
}

/** Waits before each retry of a nudge that failed (a Durable Object reset or overloaded is short-lived). */
export const NUDGE_RETRY_MS = [200, 1_000] as const;

/**
 * Wakes a scale set's object. Whatever prompted it is already in D1, so a lost nudge loses
 * nothing, but an idle scale set's periodic tick is minutes away (idle-tick.ts): a failed call is
 * tried twice more before it is left to the tick.
 */
export async function nudgeScaleSet(env: Pick<Env, "SCALE_SET">, scaleSetId: string): Promise<boolean> {
  for (let attempt = 0; ; attempt++) {
    try {
      await scaleSetObject(env, scaleSetId).nudge(scaleSetId);
      return true;
    } catch (e) {
      const wait = NUDGE_RETRY_MS[attempt];
      logEvent({ event: "nudge_failed", scale_set: scaleSetId, error: errorText(e), retry: wait !== undefined });
      if (wait === undefined) return false;
      await new Promise((resolve) => setTimeout(resolve, wait));
    }
  }
}

/** A request of this isolate nudging a scale set's object, and whether others asked meanwhile. */
interface Nudger {
  since: number;
  asked: boolean;
}

/** Per scale set (not per `env`: the runtime may hand each request its own env object). */
const nudgers = new Map<string, Nudger>();

/** A request nudges for those who asked during its calls this long at most, then leaves it to the next one. */
export const NUDGE_LEAD_MS = 2_000;

/**
 * Nudges a scale set's object after a write, sharing the call with the rest of the isolate: a
 * burst of webhook deliveries for one scale set makes one call in flight at a time rather than
 * one per delivery. The first request to come nudges; a request that comes while that call is
 * under way only says so, and the first one nudges once more when its call returns, so every
 * write is followed by a call that started after it (the object reads D1 afresh). Each request
 * makes its calls in its own context (a promise is never shared between requests); the one
 * nudging hands over after NUDGE_LEAD_MS, and a nudger that vanished (its context cut short)
 * is replaced after 10 s. Resolves to whether this request's last call reached the object (a
 * request that only asked: true).
 */
export async function nudgeAfterWrite(env: Pick<Env, "SCALE_SET">, scaleSetId: string, now = Date.now): Promise<boolean> {
  const current = nudgers.get(scaleSetId);
  if (current && now() - current.since < 10_000) {
    current.asked = true;
    return true;
  }
  const me: Nudger = { since: now(), asked: false };
  nudgers.set(scaleSetId, me);
  let ok = true;
  try {
    do {
      if (now() - me.since >= NUDGE_LEAD_MS) break;
      me.asked = false;
      ok = await nudgeScaleSet(env, scaleSetId);
    } while (me.asked);
  } finally {
    if (nudgers.get(scaleSetId) === me) nudgers.delete(scaleSetId);
  }
  // Handed over with someone still waiting: one last call, now that the next request to come nudges on its own.
  if (me.asked) ok = await nudgeScaleSet(env, scaleSetId);
  return ok;
}
