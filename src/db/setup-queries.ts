import { and, eq, inArray, isNotNull, max, or, sql } from "drizzle-orm";
import type { Db } from "./client";
import { instances, jobs } from "./schema";

/**
 * What the first-run page shows as "is it working yet": when each entity last had a workflow job
 * delivered, and which scale sets ever had a runner come up (idle, on a job, or given one). One
 * batch, bounded by the entities and scale sets shown.
 */
export interface SetupProgress {
  lastDeliveryAt: Map<string, number>;
  runnersUp: Map<string, number>;
}

export async function setupProgress(db: Db, entityIds: readonly string[], scaleSetIds: readonly string[]): Promise<SetupProgress> {
  if (entityIds.length === 0 && scaleSetIds.length === 0) return { lastDeliveryAt: new Map(), runnersUp: new Map() };
  const [deliveries, runners] = await db.batch([
    db
      .select({ entityId: jobs.entityId, at: max(jobs.updatedAt) })
      .from(jobs)
      .where(and(inArray(jobs.entityId, entityIds.length ? [...entityIds] : [""]), eq(jobs.source, "webhook")))
      .groupBy(jobs.entityId),
    db
      .select({ scaleSetId: instances.scaleSetId, n: sql<number>`count(*)` })
      .from(instances)
      .where(
        and(
          inArray(instances.scaleSetId, scaleSetIds.length ? [...scaleSetIds] : [""]),
          or(inArray(instances.runnerStatus, ["idle", "active", "online"]), isNotNull(instances.jobId)),
        ),
      )
      .groupBy(instances.scaleSetId),
  ]);
  return {
    lastDeliveryAt: new Map(deliveries.filter((d) => d.entityId && d.at !== null).map((d) => [d.entityId!, d.at!])),
    runnersUp: new Map(runners.map((r) => [r.scaleSetId, Number(r.n)])),
  };
}
