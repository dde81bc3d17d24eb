import { eq } from "drizzle-orm";
import type { Db } from "./client";
import { entities, githubCredentials, githubEndpoints } from "./schema";

/** D1 access for GitHub endpoints (github.com and GitHub Enterprise Servers). */

export type EndpointRow = typeof githubEndpoints.$inferSelect;
export type NewEndpoint = typeof githubEndpoints.$inferInsert;
/** What an update may change; absent fields keep their value. */
export type EndpointPatch = Partial<Omit<EndpointRow, "name" | "createdAt">>;

export function listEndpoints(db: Db): Promise<EndpointRow[]> {
  return db.select().from(githubEndpoints).orderBy(githubEndpoints.name);
}

export async function findEndpoint(db: Db, name: string): Promise<EndpointRow | null> {
  const [row] = await db.select().from(githubEndpoints).where(eq(githubEndpoints.name, name));
  return row ?? null;
}

export async function endpointExists(db: Db, name: string): Promise<boolean> {
  const rows = await db.select({ name: githubEndpoints.name }).from(githubEndpoints).where(eq(githubEndpoints.name, name));
  return rows.length > 0;
}

export async function insertEndpoint(db: Db, row: NewEndpoint): Promise<EndpointRow> {
  const [inserted] = await db.insert(githubEndpoints).values(row).returning();
  return inserted!;
}

/** Null when there is no such endpoint. */
export async function updateEndpoint(db: Db, name: string, patch: EndpointPatch): Promise<EndpointRow | null> {
  const [updated] = await db.update(githubEndpoints).set(patch).where(eq(githubEndpoints.name, name)).returning();
  return updated ?? null;
}

/**
 * What still uses an endpoint, in one round trip: the names of its credentials (at most 20)
 * and whether any entity is registered on it. Null when there is no such endpoint.
 */
export async function endpointUse(db: Db, name: string): Promise<{ credentials: string[]; hasEntities: boolean } | null> {
  const [endpoint, creds, ents] = await db.batch([
    db.select({ name: githubEndpoints.name }).from(githubEndpoints).where(eq(githubEndpoints.name, name)),
    db.select({ name: githubCredentials.name }).from(githubCredentials).where(eq(githubCredentials.endpointName, name)).limit(20),
    db.select({ id: entities.id }).from(entities).where(eq(entities.endpointName, name)).limit(1),
  ]);
  if (!endpoint.length) return null;
  return { credentials: creds.map((r) => r.name), hasEntities: ents.length > 0 };
}

export async function deleteEndpoint(db: Db, name: string): Promise<void> {
  await db.delete(githubEndpoints).where(eq(githubEndpoints.name, name));
}
