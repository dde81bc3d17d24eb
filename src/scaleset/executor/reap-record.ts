import { logEvent as log } from "../../observability/log";
import { count, counterName } from "../../observability/op-counters";
import type { Reap } from "../guards/lifetime-watchdog";

/** An instance the lifetime watchdog sent to deletion in this pass. */
export interface ReapedInstance {
  id: string;
  instance: string;
  reap: Reap;
}

/** The counter family of reaps, by scale set and reason (`edgerunner_instances_reaped_total` on /metrics). */
export const REAPED_COUNTER = "instances.reaped";

/**
 * Logs and counts each reap whose mark D1 applied (`applied`: the ids the batch changed), so a
 * row another writer moved first is neither logged nor counted. The counts reach D1 with the
 * run's counter flush (observability/op-counters.ts).
 */
export function recordReaps(scaleSetId: string, reaps: readonly ReapedInstance[], applied: ReadonlySet<string>): void {
  for (const { id, instance, reap } of reaps) {
    if (!applied.has(id)) continue;
    log({ event: "instance_reaped", scale_set: scaleSetId, instance, age_s: Math.round(reap.ageMs / 1000), reason: reap.reason });
    count(counterName(REAPED_COUNTER, scaleSetId, reap.reason));
  }
}
