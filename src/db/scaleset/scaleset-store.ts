import { and, eq, ne } from "drizzle-orm";
import type { Db } from "../client";
import { entities } from "../directory/schema";
import { providers } from "../providers/schema";
import { type InstanceStatus, instances } from "../runner/schema";
import { scaleSets } from "./schema";

// The scale sets as the admin API keeps them: listed with their owners, written, and the check of
// what still uses one before it is deleted.

export type ScaleSetRow = typeof scaleSets.$inferSelect;
export type NewScaleSet = typeof scaleSets.$inferInsert;
/** What an update may change; absent fields keep their value. */
export type ScaleSetPatch = Partial<Omit<ScaleSetRow, "id" | "entityId" | "createdAt">>;

/** A scale set with the entity it serves and its provider's name: what the admin API shows. */
export interface ScaleSetWithOwners {
  scaleSet: ScaleSetRow;
  entity: typeof entities.$inferSelect;
  providerName: string;
}

const withOwners = (db: Db) =>
  db
    .select({ scaleSet: scaleSets, entity: entities, providerName: providers.name })
    .from(scaleSets)
    .innerJoin(entities, eq(entities.id, scaleSets.entityId))
    .innerJoin(providers, eq(providers.id, scaleSets.providerId));

/** Every scale set by entity then name, or one entity's by name. */
export function listScaleSets(db: Db, entityId?: string): Promise<ScaleSetWithOwners[]> {
  return entityId === undefined
    ? withOwners(db).orderBy(entities.lookupKey, scaleSets.name)
    : withOwners(db).where(eq(scaleSets.entityId, entityId)).orderBy(scaleSets.name);
}

export async function findScaleSet(db: Db, id: string): Promise<ScaleSetWithOwners | null> {
  const [row] = await withOwners(db).where(eq(scaleSets.id, id));
  return row ?? null;
}

export async function scaleSetNameTaken(db: Db, entityId: string, name: string): Promise<boolean> {
  const rows = await db
    .select({ id: scaleSets.id })
    .from(scaleSets)
    .where(and(eq(scaleSets.entityId, entityId), eq(scaleSets.name, name)));
  return rows.length > 0;
}

export async function insertScaleSet(db: Db, row: NewScaleSet): Promise<void> {
  await db.insert(scaleSets).values(row);
}

export async function updateScaleSet(db: Db, id: string, patch: ScaleSetPatch): Promise<void> {
  await db.update(scaleSets).set(patch).where(eq(scaleSets.id, id));
}

const liveInstancesQuery = (db: Db, scaleSetId: string) =>
  db
    .select({ name: instances.name, status: instances.status })
    .from(instances)
    .where(and(eq(instances.scaleSetId, scaleSetId), ne(instances.status, "deleted")))
    .limit(20);

/** A scale set's instances that are not deleted (at most 20): what keeps it from being deleted or moved to another provider. */
export async function liveInstances(db: Db, scaleSetId: string): Promise<{ name: string; status: InstanceStatus }[]> {
  return liveInstancesQuery(db, scaleSetId);
}

/** Whether the scale set exists and its live instances, in one round trip: null when there is no such scale set. */
export async function scaleSetUse(db: Db, id: string): Promise<{ liveInstances: { name: string; status: InstanceStatus }[] } | null> {
  const [found, live] = await db.batch([
    db.select({ id: scaleSets.id }).from(scaleSets).where(eq(scaleSets.id, id)),
    liveInstancesQuery(db, id),
  ]);
  return found.length ? { liveInstances: live } : null;
}

export async function deleteScaleSet(db: Db, id: string): Promise<void> {
  await db.delete(scaleSets).where(eq(scaleSets.id, id));
}
