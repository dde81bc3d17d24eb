import { eq } from "drizzle-orm";
import type { Db } from "./client";
import { providers, scaleSets } from "./schema";

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

export async function updateProvider(db: Db, id: string, patch: ProviderPatch): Promise<ProviderRow> {
  const [updated] = await db.update(providers).set(patch).where(eq(providers.id, id)).returning();
  return updated!;
}

/** The scale sets (at most 20) that use a provider. */
export function providerUsers(db: Db, id: string): Promise<{ id: string; name: string }[]> {
  return db.select({ id: scaleSets.id, name: scaleSets.name }).from(scaleSets).where(eq(scaleSets.providerId, id)).limit(20);
}

export async function deleteProvider(db: Db, id: string): Promise<void> {
  await db.delete(providers).where(eq(providers.id, id));
}
