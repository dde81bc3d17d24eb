import type { Context } from "hono";
import { claimWaitingJobs, readWaitingJobs } from "../db/jobs/job-store";
import type { AppEnv } from "../env";
import { afterResponse } from "../http/after-response";
import { errorText, logEvent } from "../observability/log";
import { nudgeScaleSet } from "../scaleset/stub";
import { DIRECTORY_TTL_MS } from "./directory";
import { rerouteWaitingJobs } from "./routing";

/**
 * Jobs that came in while no scale set could take them wait unmatched (GitHub keeps them
 * queued). When a scale set is created or changed, the waiting jobs it might now serve are
 * routed again, by the same rules as intake: a user who adds the missing scale set gets runners
 * for the jobs already waiting, not only for the next ones.
 */

/**
 * Routes again the waiting unmatched jobs an entity's scale sets might serve (db/jobs/job-store.ts
 * readWaitingJobs says which). Two D1 round trips: one read, one write that only claims jobs
 * still unmatched. Returns how many jobs each scale set got.
 */
export async function routeWaitingJobs(db: D1Database, entityId: string, now = Date.now()): Promise<Map<string, number>> {
  const { jobs, scaleSets } = await readWaitingJobs(db, entityId);
  if (!jobs.length) return new Map();
  return claimWaitingJobs(db, rerouteWaitingJobs(jobs, scaleSets), now);
}

/**
 * Jobs already waiting unmatched that an entity's scale sets now serve (a scale set created or
 * changed, or the entity's parent links changed) get routed, and the scale sets that got some
 * are woken (`changed`, if given, is nudged by the caller anyway). Deliveries checked against an
 * isolate's cached directory may still store jobs unmatched until that cache expires, so the
 * same pass runs once more after it has, after the response: the webhook path never re-reads.
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
