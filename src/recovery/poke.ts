import type { Env } from "../env";
import { errorText, logEvent } from "../observability/log";
import { recoveryObject } from "./rpc";

/** Makes sure delivery recovery is scheduled. Best effort: the next caller (a scale set's first alarm, the hourly trigger) tries again. */
export async function pokeRecovery(env: Pick<Env, "DELIVERY_RECOVERY">): Promise<void> {
  try {
    await recoveryObject(env).poke();
  } catch (e) {
    logEvent({ event: "recovery_poke_failed", error: errorText(e) });
  }
}
