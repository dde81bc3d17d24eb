import { and, eq, inArray, ne, sql } from "drizzle-orm";
import type { Db } from "../client";
import { type EntityKind, entities, entityCredentials } from "../directory/schema";
import { instances } from "../runner/schema";
import { type CredentialRow, type CredentialStateRow, clearCredentialState } from "./github-state-store";
import { type Forge, githubCredentialState, githubCredentials, githubEndpoints } from "./schema";

/**
 * D1 access for GitHub credentials as the admin API keeps them. Their shared state (health,
 * rate limit, installation token) is written by the GitHub client through github-state-store.ts;
 * here it is only read alongside, and forgotten when the credential changes identity.
 */

/** The bound API URL is not the caller's to give: the insert reads it from the endpoint. */
export type NewCredentials = Omit<typeof githubCredentials.$inferInsert, "boundApiUrl">;
/** What an update may change; absent fields keep their value. */
export type CredentialsPatch = Partial<
  Pick<CredentialRow, "name" | "description" | "appId" | "installationId" | "secretEnc" | "webhookSecretEnc" | "updatedAt">
>;

export interface CredentialsWithState {
  credential: CredentialRow;
  state: CredentialStateRow | null;
}

const withState = (db: Db) =>
  db
    .select({ credential: githubCredentials, state: githubCredentialState })
    .from(githubCredentials)
    .leftJoin(githubCredentialState, eq(githubCredentialState.credentialId, githubCredentials.id));

export function listCredentials(db: Db): Promise<CredentialsWithState[]> {
  return withState(db).orderBy(githubCredentials.name);
}

export async function findCredentialsWithState(db: Db, id: string): Promise<CredentialsWithState | null> {
  const [row] = await withState(db).where(eq(githubCredentials.id, id));
  return row ?? null;
}

export async function findCredentials(db: Db, id: string): Promise<CredentialRow | null> {
  const [row] = await db.select().from(githubCredentials).where(eq(githubCredentials.id, id));
  return row ?? null;
}

export async function findCredentialsByName(db: Db, name: string): Promise<CredentialRow | null> {
  const [row] = await db.select().from(githubCredentials).where(eq(githubCredentials.name, name));
  return row ?? null;
}

/** The credentials of these names that exist (a pool's candidates): id, name and endpoint. */
export async function findCredentialsByNames(
  db: Db,
  names: readonly string[],
): Promise<{ id: string; name: string; endpointName: string }[]> {
  if (!names.length) return [];
  return db
    .select({ id: githubCredentials.id, name: githubCredentials.name, endpointName: githubCredentials.endpointName })
    .from(githubCredentials)
    .where(inArray(githubCredentials.name, [...names]));
}

export async function credentialsNameTaken(db: Db, name: string): Promise<boolean> {
  const rows = await db.select({ id: githubCredentials.id }).from(githubCredentials).where(eq(githubCredentials.name, name));
  return rows.length > 0;
}

/** What adding credentials depends on, in one round trip: the endpoint exists, the name is free. */
export async function newCredentialsChecks(
  db: Db,
  endpointName: string,
  name: string,
): Promise<{ endpointExists: boolean; nameTaken: boolean; forge: Forge | null }> {
  const [endpoint, taken] = await db.batch([
    db
      .select({ name: githubEndpoints.name, forge: githubEndpoints.forge })
      .from(githubEndpoints)
      .where(eq(githubEndpoints.name, endpointName)),
    db.select({ id: githubCredentials.id }).from(githubCredentials).where(eq(githubCredentials.name, name)),
  ]);
  return { endpointExists: endpoint.length > 0, nameTaken: taken.length > 0, forge: endpoint[0]?.forge ?? null };
}

/**
 * Stores credentials bound to their endpoint's API URL as the insert reads it, in the same
 * statement: an endpoint changed between the route's checks and this write cannot leave them
 * bound to a URL they were not given for.
 */
export async function insertCredentials(db: Db, row: NewCredentials): Promise<CredentialRow> {
  const boundApiUrl = sql<string>`(SELECT rtrim(${githubEndpoints.apiBaseUrl}, '/') FROM ${githubEndpoints} WHERE ${githubEndpoints.name} = ${row.endpointName})`;
  const [inserted] = await db
    .insert(githubCredentials)
    .values({ ...row, boundApiUrl })
    .returning();
  return inserted!;
}

/**
 * Updates credentials and returns them with their shared state. With `forgetState` (a new
 * token, key, App or installation: a different credential to GitHub) the state is deleted in
 * the same batch, so no isolate goes on using a failing mark or a token of the old one.
 */
export async function updateCredentials(db: Db, id: string, patch: CredentialsPatch, forgetState: boolean): Promise<CredentialsWithState> {
  const update = db.update(githubCredentials).set(patch).where(eq(githubCredentials.id, id)).returning();
  if (forgetState) {
    const [updated] = await db.batch([update, clearCredentialState(db, id)]);
    return { credential: updated[0]!, state: null };
  }
  const [updated] = await update;
  const [state] = await db.select().from(githubCredentialState).where(eq(githubCredentialState.credentialId, id));
  return { credential: updated!, state: state ?? null };
}

/** An entity that still needs credentials, as an error names it. */
export interface CredentialUser {
  id: string;
  kind: EntityKind;
  /** `owner/name`, `org` or the enterprise slug. */
  name: string;
}

/** What keeps credentials from being deleted. */
export interface CredentialsUse {
  /** Entities (at most 20) that act with them. */
  entities: CredentialUser[];
  /** Entities (at most 20) that have them in their credential pool. */
  pools: CredentialUser[];
  /** Runners not yet deleted whose JIT config they minted: their cleanup at GitHub goes through them. */
  liveRunners: number;
}

const userColumns = {
  id: entities.id,
  kind: entities.kind,
  name: sql<string>`${entities.owner} || CASE WHEN ${entities.name} = '' THEN '' ELSE '/' || ${entities.name} END`,
};

/**
 * Whether the credentials exist and what still needs them, in one round trip: the entities that
 * act with them, those with them in their pool, and the live runners they minted. Null when
 * there are no such credentials. (The runner count reads instances without an index on
 * `jit_credentials_id`: a scan, paid only when someone deletes credentials.)
 */
export async function credentialsUse(db: Db, id: string): Promise<CredentialsUse | null> {
  const [row, users, pools, runners] = await db.batch([
    db.select({ id: githubCredentials.id }).from(githubCredentials).where(eq(githubCredentials.id, id)),
    db.select(userColumns).from(entities).where(eq(entities.credentialsId, id)).orderBy(entities.lookupKey).limit(20),
    db
      .select(userColumns)
      .from(entityCredentials)
      .innerJoin(entities, eq(entities.id, entityCredentials.entityId))
      .where(eq(entityCredentials.credentialId, id))
      .orderBy(entities.lookupKey)
      .limit(20),
    db
      .select({ n: sql<number>`count(*)` })
      .from(instances)
      .where(and(eq(instances.jitCredentialsId, id), ne(instances.status, "deleted"))),
  ]);
  return row.length ? { entities: users, pools, liveRunners: runners[0]?.n ?? 0 } : null;
}

export async function deleteCredentials(db: Db, id: string): Promise<void> {
  await db.delete(githubCredentials).where(eq(githubCredentials.id, id));
}
