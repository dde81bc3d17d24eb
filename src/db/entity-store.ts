import { and, eq } from "drizzle-orm";
import type { Db } from "./client";
import { type EntityKind, entities, githubCredentials, scaleSets } from "./schema";

/** D1 access for entities (the repositories, organizations and enterprises scale sets serve), as the admin API keeps them. */

export type EntityRow = typeof entities.$inferSelect;
export type NewEntity = typeof entities.$inferInsert;
/** What an update may change; absent fields keep their value. */
export type EntityPatch = Partial<
  Pick<EntityRow, "credentialsId" | "webhookSecretEnc" | "useParentScaleSets" | "enterprise" | "updatedAt">
>;

/** An entity with the name of the credentials it acts with. */
export interface EntityWithCredentials {
  entity: EntityRow;
  credentialsName: string;
}

const withCredentials = (db: Db) =>
  db
    .select({ entity: entities, credentialsName: githubCredentials.name })
    .from(entities)
    .innerJoin(githubCredentials, eq(githubCredentials.id, entities.credentialsId));

export function listEntities(db: Db, kind: EntityKind): Promise<EntityWithCredentials[]> {
  return withCredentials(db).where(eq(entities.kind, kind)).orderBy(entities.lookupKey);
}

export async function findEntityWithCredentials(db: Db, kind: EntityKind, id: string): Promise<EntityWithCredentials | null> {
  const [row] = await withCredentials(db).where(and(eq(entities.id, id), eq(entities.kind, kind)));
  return row ?? null;
}

export async function findEntity(db: Db, kind: EntityKind, id: string): Promise<EntityRow | null> {
  const [row] = await db
    .select()
    .from(entities)
    .where(and(eq(entities.id, id), eq(entities.kind, kind)));
  return row ?? null;
}

/** The id of the entity registered under this lookup key (github/entity-names.ts) on an endpoint. */
export async function entityIdByLookupKey(db: Db, endpointName: string, lookupKey: string): Promise<string | null> {
  const [row] = await db
    .select({ id: entities.id })
    .from(entities)
    .where(and(eq(entities.endpointName, endpointName), eq(entities.lookupKey, lookupKey)));
  return row?.id ?? null;
}

export async function insertEntity(db: Db, row: NewEntity): Promise<EntityRow> {
  const [inserted] = await db.insert(entities).values(row).returning();
  return inserted!;
}

export async function updateEntity(db: Db, id: string, patch: EntityPatch): Promise<void> {
  await db.update(entities).set(patch).where(eq(entities.id, id));
}

/**
 * Whether the entity exists and which scale sets (at most 20) still serve it, in one round
 * trip: null when there is no such entity.
 */
export async function entityUse(db: Db, kind: EntityKind, id: string): Promise<{ scaleSets: { id: string; name: string }[] } | null> {
  const [found, sets] = await db.batch([
    db
      .select({ id: entities.id })
      .from(entities)
      .where(and(eq(entities.id, id), eq(entities.kind, kind))),
    db.select({ id: scaleSets.id, name: scaleSets.name }).from(scaleSets).where(eq(scaleSets.entityId, id)).limit(20),
  ]);
  return found.length ? { scaleSets: sets } : null;
}

export async function deleteEntity(db: Db, id: string): Promise<void> {
  await db.delete(entities).where(eq(entities.id, id));
}
