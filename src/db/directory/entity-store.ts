import { and, asc, eq, notInArray, sql } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import type { Db } from "../client";
import { type Forge, githubCredentials, githubEndpoints } from "../github/schema";
import { scaleSets } from "../scaleset/schema";
import { type EntityKind, entities, entityCredentials } from "./schema";

/**
 * D1 access for entities (the repositories, organizations and enterprises scale sets serve), as
 * the admin API keeps them, with their credential pools (table `entity_credentials`: other
 * credentials of the entity's endpoint that mint its runners' JIT configs beside its own).
 */

export type EntityRow = typeof entities.$inferSelect;
export type NewEntity = typeof entities.$inferInsert;
/** What an update may change; absent fields keep their value. */
export type EntityPatch = Partial<
  Pick<EntityRow, "credentialsId" | "webhookSecretEnc" | "useParentScaleSets" | "enterprise" | "updatedAt">
>;

/** A credential of an entity's pool, as views name it. */
export interface PoolMember {
  id: string;
  name: string;
}

/** An entity with its endpoint's forge, the name of the credentials it acts with and its pool (oldest member first). */
export interface EntityWithCredentials {
  entity: EntityRow;
  credentialsName: string;
  forge: Forge;
  pool: PoolMember[];
}

// Aliased: D1's batch answers rows keyed by column name, where the entity's `name` would hide the credentials'.
const withCredentials = (db: Db) =>
  db
    .select({
      entity: entities,
      credentialsName: sql<string>`${githubCredentials.name}`.as("credentials_name"),
      forge: githubEndpoints.forge,
    })
    .from(entities)
    .innerJoin(githubCredentials, eq(githubCredentials.id, entities.credentialsId))
    .innerJoin(githubEndpoints, eq(githubEndpoints.name, entities.endpointName));

/** Pool members with the entity they belong to, in the order they were added. */
const poolRows = (db: Db) =>
  db
    .select({ entityId: entityCredentials.entityId, id: githubCredentials.id, name: githubCredentials.name })
    .from(entityCredentials)
    .innerJoin(githubCredentials, eq(githubCredentials.id, entityCredentials.credentialId))
    .innerJoin(entities, eq(entities.id, entityCredentials.entityId));
const poolOrder = [asc(entityCredentials.addedAt), asc(githubCredentials.name)] as const;

type PoolRow = PoolMember & { entityId: string };

function withPools(
  rows: readonly { entity: EntityRow; credentialsName: string; forge: Forge }[],
  pools: readonly PoolRow[],
): EntityWithCredentials[] {
  const byEntity = new Map<string, PoolMember[]>();
  for (const { entityId, id, name } of pools) {
    const list = byEntity.get(entityId) ?? [];
    list.push({ id, name });
    byEntity.set(entityId, list);
  }
  return rows.map((r) => ({ ...r, pool: byEntity.get(r.entity.id) ?? [] }));
}

/** Every entity of a kind with its credentials' name and its pool: two statements, one round trip. */
export async function listEntities(db: Db, kind: EntityKind): Promise<EntityWithCredentials[]> {
  const [rows, pools] = await db.batch([
    withCredentials(db).where(eq(entities.kind, kind)).orderBy(entities.lookupKey),
    poolRows(db)
      .where(eq(entities.kind, kind))
      .orderBy(...poolOrder),
  ]);
  return withPools(rows, pools);
}

export async function findEntityWithCredentials(db: Db, kind: EntityKind, id: string): Promise<EntityWithCredentials | null> {
  const [rows, pools] = await db.batch([
    withCredentials(db).where(and(eq(entities.id, id), eq(entities.kind, kind))),
    poolRows(db)
      .where(and(eq(entities.id, id), eq(entities.kind, kind)))
      .orderBy(...poolOrder),
  ]);
  return withPools(rows, pools)[0] ?? null;
}

/** An entity's pool, oldest member first (empty when it has none, or there is no such entity). */
export async function entityPool(db: Db, entityId: string): Promise<PoolMember[]> {
  const rows = await poolRows(db)
    .where(eq(entityCredentials.entityId, entityId))
    .orderBy(...poolOrder);
  return rows.map(({ id, name }) => ({ id, name }));
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

/**
 * The statements that make an entity's pool `credentialIds`: members not listed go, listed ones
 * not yet members come in (added at `at`, one millisecond apart so they keep the order given),
 * and members that stay keep when they were added.
 */
function replacePool(db: Db, entityId: string, credentialIds: readonly string[], at: number): BatchItem<"sqlite">[] {
  const remove = db
    .delete(entityCredentials)
    .where(and(eq(entityCredentials.entityId, entityId), notInArray(entityCredentials.credentialId, [...credentialIds])));
  if (!credentialIds.length) return [remove];
  const add = db
    .insert(entityCredentials)
    .values(credentialIds.map((credentialId, i) => ({ entityId, credentialId, addedAt: at + i })))
    .onConflictDoNothing();
  return [remove, add];
}

/** Adds an entity with its pool, in one batch. */
export async function insertEntity(db: Db, row: NewEntity, poolCredentialIds: readonly string[] = []): Promise<EntityRow> {
  const [inserted] = await db.batch([
    db.insert(entities).values(row).returning(),
    ...(poolCredentialIds.length ? replacePool(db, row.id, poolCredentialIds, row.createdAt) : []),
  ]);
  return inserted[0]!;
}

/**
 * Updates an entity and, when `poolCredentialIds` is given, replaces its pool, in one batch. An
 * entity's own credentials are never in its pool: new ones leave it in the same batch.
 */
export async function updateEntity(db: Db, id: string, patch: EntityPatch, poolCredentialIds?: readonly string[]): Promise<void> {
  const statements: BatchItem<"sqlite">[] = [];
  if (poolCredentialIds !== undefined) statements.push(...replacePool(db, id, poolCredentialIds, patch.updatedAt ?? Date.now()));
  if (patch.credentialsId !== undefined) {
    statements.push(
      db.delete(entityCredentials).where(and(eq(entityCredentials.entityId, id), eq(entityCredentials.credentialId, patch.credentialsId))),
    );
  }
  await db.batch([db.update(entities).set(patch).where(eq(entities.id, id)), ...statements]);
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

/** Deletes an entity; its pool goes with it (ON DELETE CASCADE). */
export async function deleteEntity(db: Db, id: string): Promise<void> {
  await db.delete(entities).where(eq(entities.id, id));
}
