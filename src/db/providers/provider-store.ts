import { and, eq, notExists, or, sql } from "drizzle-orm";
import type { Db } from "../client";
import { scaleSets } from "../scaleset/schema";
import { providers } from "./schema";

/** D1 access for providers (the shims the coordinator calls, and that call it back). */

export type ProviderRow = typeof providers.$inferSelect;
export type NewProvider = typeof providers.$inferInsert;
/** What an update may change; absent fields keep their value. */
export type ProviderPatch = Partial<Pick<ProviderRow, "url" | "description" | "timeoutSeconds" | "secretEnc" | "updatedAt">>;

/** A provider's identity and sealed secret, by its name: what a shim's signature is checked against. */
export async function providerSecretByName(db: Db, name: string): Promise<{ id: string; name: string; secretEnc: string } | null> {
  const [row] = await db
    .select({ id: providers.id, name: providers.name, secretEnc: providers.secretEnc })
    .from(providers)
    .where(eq(providers.name, name));
  return row ?? null;
}

export function listProviders(db: Db): Promise<ProviderRow[]> {
  return db.select().from(providers).orderBy(providers.name);
}

export async function findProvider(db: Db, name: string): Promise<ProviderRow | null> {
  const [row] = await db.select().from(providers).where(eq(providers.name, name));
  return row ?? null;
}

export async function providerIdByName(db: Db, name: string): Promise<string | null> {
  const [row] = await db.select({ id: providers.id }).from(providers).where(eq(providers.name, name));
  return row?.id ?? null;
}

export async function insertProvider(db: Db, row: NewProvider): Promise<ProviderRow> {
  const [inserted] = await db.insert(providers).values(row).returning();
  return inserted!;
}

/**
 * Updates a provider. With `urlFixedWhileUsed`, a `url` the patch changes is written only while
 * no scale set uses the provider (sending the stored URL is no change): the route sets it unless
 * the same request brings a new secret, so what was signed for one shim never goes to another
 * host. One statement, so a scale set added while the request ran cannot be moved by it. Null
 * when nothing was updated: no such provider, or the patch would move one in use
 * (providerUsers says which).
 */
export async function updateProvider(
  db: Db,
  id: string,
  patch: ProviderPatch,
  { urlFixedWhileUsed }: { urlFixedWhileUsed: boolean },
): Promise<ProviderRow | null> {
  const unused = notExists(db.select({ one: sql`1` }).from(scaleSets).where(eq(scaleSets.providerId, id)));
  const where =
    urlFixedWhileUsed && patch.url !== undefined
      ? and(eq(providers.id, id), or(eq(providers.url, patch.url), unused))
      : eq(providers.id, id);
  const [updated] = await db.update(providers).set(patch).where(where).returning();
  return updated ?? null;
}

/** The scale sets (at most 20, by name) that use a provider. */
export function providerUsers(db: Db, id: string): Promise<{ id: string; name: string }[]> {
  return db
    .select({ id: scaleSets.id, name: scaleSets.name })
    .from(scaleSets)
    .where(eq(scaleSets.providerId, id))
    .orderBy(scaleSets.name)
    .limit(20);
}

export async function deleteProvider(db: Db, id: string): Promise<void> {
  await db.delete(providers).where(eq(providers.id, id));
}
