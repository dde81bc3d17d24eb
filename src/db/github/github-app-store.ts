import { and, eq, gt, isNull, lt, or, sql } from "drizzle-orm";
import type { InstallationRecord } from "../../setup/installations";
import type { Db } from "../client";
import { githubAppInstallations, githubAppManifests, githubApps, githubCredentials, githubEndpoints } from "./schema";

/**
 * D1 access for the GitHub Apps made on the first-run page: the manifest round trips, the Apps
 * GitHub created from them, and where they are installed.
 */

export type GithubAppRow = typeof githubApps.$inferSelect;
export type NewGithubApp = Omit<typeof githubApps.$inferInsert, "boundApiUrl">;
export type ManifestRow = typeof githubAppManifests.$inferSelect;
export type InstallationRow = typeof githubAppInstallations.$inferSelect;

export async function insertManifestState(db: Db, row: typeof githubAppManifests.$inferInsert): Promise<void> {
  await db.insert(githubAppManifests).values(row);
}

export async function findManifestState(db: Db, stateHash: string): Promise<ManifestRow | null> {
  const [row] = await db.select().from(githubAppManifests).where(eq(githubAppManifests.stateHash, stateHash));
  return row ?? null;
}

/** How long a claim holds before another request may exchange the code (a claim whose request died). */
const CLAIM_HOLD_MS = 60_000;

/**
 * Claims an unexpired, unfinished round trip of this session for one code exchange. False when
 * another request holds it, it finished, expired or belongs to another session.
 */
export async function claimManifestState(db: Db, stateHash: string, sessionHash: string, now: number): Promise<boolean> {
  const claimed = await db
    .update(githubAppManifests)
    .set({ claimedAt: now })
    .where(
      and(
        eq(githubAppManifests.stateHash, stateHash),
        eq(githubAppManifests.sessionHash, sessionHash),
        gt(githubAppManifests.expiresAt, now),
        isNull(githubAppManifests.appRowId),
        or(isNull(githubAppManifests.claimedAt), lt(githubAppManifests.claimedAt, now - CLAIM_HOLD_MS)),
      ),
    )
    .returning({ stateHash: githubAppManifests.stateHash });
  return claimed.length === 1;
}

/** Lets the round trip be tried again (the exchange failed before GitHub used the code up). */
export async function releaseManifestState(db: Db, stateHash: string): Promise<void> {
  await db.update(githubAppManifests).set({ claimedAt: null }).where(eq(githubAppManifests.stateHash, stateHash));
}

/**
 * Stores the App GitHub created, bound to its endpoint's API URL as the insert reads it, and
 * closes the round trip, in one batch: the sealed secrets are never written without the state
 * that says the code is spent.
 */
export async function insertAppFromManifest(db: Db, app: NewGithubApp, stateHash: string): Promise<GithubAppRow> {
  const boundApiUrl = sql<string>`(SELECT rtrim(${githubEndpoints.apiBaseUrl}, '/') FROM ${githubEndpoints} WHERE ${githubEndpoints.name} = ${app.endpointName})`;
  const [inserted] = await db.batch([
    db
      .insert(githubApps)
      .values({ ...app, boundApiUrl })
      .returning(),
    db.update(githubAppManifests).set({ appRowId: app.id }).where(eq(githubAppManifests.stateHash, stateHash)),
  ]);
  return inserted[0]!;
}

/** Round trips that ended or were abandoned more than a day ago: nothing reads them. */
export async function pruneManifestStates(db: Db, before: number): Promise<void> {
  await db.delete(githubAppManifests).where(lt(githubAppManifests.expiresAt, before));
}

export function listApps(db: Db): Promise<GithubAppRow[]> {
  return db.select().from(githubApps).orderBy(githubApps.createdAt);
}

export async function findApp(db: Db, id: string): Promise<GithubAppRow | null> {
  const [row] = await db.select().from(githubApps).where(eq(githubApps.id, id));
  return row ?? null;
}

/** The App of an installation delivery: by the endpoint it came from and the App id it names. */
export async function findAppByAppId(db: Db, endpointName: string, appId: number): Promise<GithubAppRow | null> {
  const [row] = await db
    .select()
    .from(githubApps)
    .where(and(eq(githubApps.endpointName, endpointName), eq(githubApps.appId, appId)));
  return row ?? null;
}

export async function deleteApp(db: Db, id: string): Promise<void> {
  await db.delete(githubApps).where(eq(githubApps.id, id));
}

export function listInstallations(db: Db, appRowId?: string): Promise<InstallationRow[]> {
  const q = db.select().from(githubAppInstallations);
  return (appRowId ? q.where(eq(githubAppInstallations.appRowId, appRowId)) : q).orderBy(
    githubAppInstallations.accountLogin,
    githubAppInstallations.installationId,
  );
}

export async function findInstallation(db: Db, appRowId: string, installationId: number): Promise<InstallationRow | null> {
  const [row] = await db
    .select()
    .from(githubAppInstallations)
    .where(and(eq(githubAppInstallations.appRowId, appRowId), eq(githubAppInstallations.installationId, installationId)));
  return row ?? null;
}

export function installationRecord(row: InstallationRow): InstallationRecord {
  return {
    installationId: row.installationId,
    accountLogin: row.accountLogin,
    accountType: row.accountType,
    repositorySelection: row.repositorySelection,
    repositories: JSON.parse(row.repositories) as string[],
    status: row.status,
  };
}

export async function saveInstallation(
  db: Db,
  appRowId: string,
  rec: InstallationRecord,
  credentialsId: string | null,
  now: number,
): Promise<void> {
  const values = {
    accountLogin: rec.accountLogin,
    accountType: rec.accountType,
    repositorySelection: rec.repositorySelection,
    repositories: JSON.stringify(rec.repositories),
    status: rec.status,
    credentialsId,
    updatedAt: now,
  };
  await db
    .insert(githubAppInstallations)
    .values({ appRowId, installationId: rec.installationId, ...values })
    .onConflictDoUpdate({ target: [githubAppInstallations.appRowId, githubAppInstallations.installationId], set: values });
}

/** Names of every credential (to pick a free one for an installation's). */
export async function credentialNames(db: Db): Promise<Set<string>> {
  const rows = await db.select({ name: githubCredentials.name }).from(githubCredentials);
  return new Set(rows.map((r) => r.name));
}

/** The credentials already made for one installation of one App on one endpoint, if any. */
export async function credentialsForInstallation(
  db: Db,
  endpointName: string,
  appId: number,
  installationId: number,
): Promise<string | null> {
  const [row] = await db
    .select({ id: githubCredentials.id })
    .from(githubCredentials)
    .where(
      and(
        eq(githubCredentials.endpointName, endpointName),
        eq(githubCredentials.appId, appId),
        eq(githubCredentials.installationId, installationId),
      ),
    )
    .limit(1);
  return row?.id ?? null;
}
