import { and, eq, isNull, ne, notExists, or, type SQL, sql } from "drizzle-orm";
import type { Db } from "../client";
import { type EntityKind, entities } from "../directory/schema";
import { type Forge, githubCredentials, githubEndpoints } from "./schema";

/** D1 access for GitHub endpoints (github.com and GitHub Enterprise Servers). */

export type EndpointRow = typeof githubEndpoints.$inferSelect;
export type NewEndpoint = typeof githubEndpoints.$inferInsert;
/** What an update may change; absent fields keep their value. */
export type EndpointPatch = Partial<Omit<EndpointRow, "name" | "createdAt">>;

/** The forge of an entity's endpoint (github when the entity is unknown: the caller has checked it exists). */
export async function entityForge(db: Db, entityId: string): Promise<Forge> {
  const [row] = await db
    .select({ forge: githubEndpoints.forge })
    .from(entities)
    .innerJoin(githubEndpoints, eq(githubEndpoints.name, entities.endpointName))
    .where(eq(entities.id, entityId));
  return row?.forge ?? "github";
}

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

/**
 * The fields that say where an endpoint's credentials are sent (and which CA the runners trust
 * for it): fixed while credentials or entities use the endpoint.
 */
export const endpointPlaceFields = ["baseUrl", "apiBaseUrl", "uploadBaseUrl", "caCertBundle"] as const;

/**
 * Updates an endpoint. A place field (endpointPlaceFields) that `patch` changes is written only
 * while no credential and no entity uses the endpoint; sending the stored value is no change,
 * and neither is an `apiBaseUrl` every credential on the endpoint is bound to (pointing an
 * endpoint moved behind the API's back home again). One statement, so credentials stored while
 * the request ran cannot be moved by it. Null when nothing was updated: no such endpoint, or
 * the patch would move one in use (endpointUse says which).
 */
export async function updateEndpoint(db: Db, name: string, patch: EndpointPatch): Promise<EndpointRow | null> {
  const unchanged: SQL[] = [];
  for (const field of endpointPlaceFields) {
    const value = patch[field];
    if (value === undefined) continue;
    if (value === null) unchanged.push(isNull(githubEndpoints[field]));
    else if (field !== "apiBaseUrl") unchanged.push(eq(githubEndpoints[field], value));
    else {
      const boundElsewhere = db
        .select({ one: sql`1` })
        .from(githubCredentials)
        .where(
          and(
            eq(githubCredentials.endpointName, name),
            or(isNull(githubCredentials.boundApiUrl), ne(githubCredentials.boundApiUrl, value)),
          ),
        );
      unchanged.push(or(eq(githubEndpoints.apiBaseUrl, value), notExists(boundElsewhere))!);
    }
  }
  const unused = and(
    notExists(db.select({ one: sql`1` }).from(githubCredentials).where(eq(githubCredentials.endpointName, name))),
    notExists(db.select({ one: sql`1` }).from(entities).where(eq(entities.endpointName, name))),
  );
  const where = unchanged.length ? and(eq(githubEndpoints.name, name), or(unused, and(...unchanged))) : eq(githubEndpoints.name, name);
  const [updated] = await db.update(githubEndpoints).set(patch).where(where).returning();
  return updated ?? null;
}

export interface EndpointUse {
  /** Names, at most 20. */
  credentials: string[];
  /** At most 20. */
  entities: { id: string; kind: EntityKind }[];
}

/**
 * What still uses an endpoint, in one round trip: its credentials and the entities registered
 * on it (at most 20 of each). Null when there is no such endpoint.
 */
export async function endpointUse(db: Db, name: string): Promise<EndpointUse | null> {
  const [endpoint, creds, ents] = await db.batch([
    db.select({ name: githubEndpoints.name }).from(githubEndpoints).where(eq(githubEndpoints.name, name)),
    db
      .select({ name: githubCredentials.name })
      .from(githubCredentials)
      .where(eq(githubCredentials.endpointName, name))
      .orderBy(githubCredentials.name)
      .limit(20),
    db
      .select({ id: entities.id, kind: entities.kind })
      .from(entities)
      .where(eq(entities.endpointName, name))
      .orderBy(entities.kind, entities.id)
      .limit(20),
  ]);
  if (!endpoint.length) return null;
  return { credentials: creds.map((r) => r.name), entities: ents };
}

export async function deleteEndpoint(db: Db, name: string): Promise<void> {
  await db.delete(githubEndpoints).where(eq(githubEndpoints.name, name));
}
