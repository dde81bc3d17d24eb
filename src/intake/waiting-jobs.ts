import type { Context } from "hono";
import { routeWaitingJobs } from "../db/unmatched-jobs";
import { DIRECTORY_TTL_MS } from "../db/webhook-directory";
import type { AppEnv } from "../env";
import { afterResponse } from "../http/after-response";
import { errorText, logEvent } from "../observability/log";
import { nudgeScaleSet } from "../scaleset/stub";

/**
 * Jobs already waiting unmatched that an entity's scale sets now serve (a scale set created or
 * changed, or the entity's parent links changed) get routed, and the scale sets that got some
 * are woken (`changed`, if given, is nudged by the caller anyway). Deliveries checked against an
 * isolate's cached directory may still store jobs unmatched until that cache expires, so the
 * same pass runs once more after it has, after the response: the webhook path never re-reads
 * for this.
 */
export async function routeWaiting(c: Context<AppEnv>, entityId: string, changed: string | null, reason: string): Promise<void> {
  const pass = async (nudged: string | null) => {
    for (const [scaleSetId, jobs] of await routeWaitingJobs(c.env.DB, entityId)) {
      if (!jobs) continue;
      logEvent({ event: "jobs_routed", scale_set: scaleSetId, jobs, reason });
      if (scaleSetId !== nudged) await nudgeScaleSet(c.env, scaleSetId);
    }
  };
  await pass(changed);
  void afterResponse(
    c,
    new Promise((r) => setTimeout(r, DIRECTORY_TTL_MS + 1_000))
      .then(() => pass(null))
      .catch((e) => logEvent({ event: "jobs_route_failed", error: errorText(e) })),
  );
}
