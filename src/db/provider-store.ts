import { eq } from "drizzle-orm";
import type { Db } from "./client";
import { providers } from "./schema";

/** D1 access for providers (the shims the coordinator calls, and that call it back). */

/** A provider's identity and sealed secret, by its name: what a shim's signature is checked against. */
export async function providerSecretByName(db: Db, name: string): Promise<{ id: string; name: string; secretEnc: string } | null> {
  const [row] = await db.select({ id: providers.id, name: providers.name, secretEnc: providers.secretEnc }).from(providers).where(eq(providers.name, name));
  return row ?? null;
}
