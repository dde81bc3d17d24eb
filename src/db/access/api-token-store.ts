import { and, desc, eq, isNull, lt, or } from "drizzle-orm";
import type { Db } from "../client";
import { apiTokens } from "./schema";

/** D1 access for named API tokens (the hash only: the token itself is never stored). */

export type ApiTokenRow = typeof apiTokens.$inferSelect;
export type NewApiToken = typeof apiTokens.$inferInsert;

/** What authentication needs of a token, by the hash of what the client sent: one indexed lookup. */
export type TokenLookup = Pick<ApiTokenRow, "id" | "name" | "scope" | "expiresAt" | "lastUsedAt" | "revokedAt">;

export async function tokenByHash(db: Db, tokenHash: string): Promise<TokenLookup | null> {
  const [row] = await db
    .select({
      id: apiTokens.id,
      name: apiTokens.name,
      scope: apiTokens.scope,
      expiresAt: apiTokens.expiresAt,
      lastUsedAt: apiTokens.lastUsedAt,
      revokedAt: apiTokens.revokedAt,
    })
    .from(apiTokens)
    .where(eq(apiTokens.tokenHash, tokenHash));
  return row ?? null;
}

/** Newest first; revoked tokens too (they say who could do what, and when it ended). */
export function listTokens(db: Db): Promise<ApiTokenRow[]> {
  return db.select().from(apiTokens).orderBy(desc(apiTokens.createdAt), apiTokens.name);
}

export async function findToken(db: Db, id: string): Promise<ApiTokenRow | null> {
  const [row] = await db.select().from(apiTokens).where(eq(apiTokens.id, id));
  return row ?? null;
}

/** Whether a token that is not revoked has this name (names are unique among those). */
export async function activeTokenNamed(db: Db, name: string): Promise<boolean> {
  const [row] = await db
    .select({ id: apiTokens.id })
    .from(apiTokens)
    .where(and(eq(apiTokens.name, name), isNull(apiTokens.revokedAt)));
  return row !== undefined;
}

export async function insertToken(db: Db, row: NewApiToken): Promise<ApiTokenRow> {
  const [inserted] = await db.insert(apiTokens).values(row).returning();
  return inserted!;
}

/** Revokes a token; a token already revoked keeps its first revocation time. */
export async function revokeToken(db: Db, id: string, at: number): Promise<ApiTokenRow | null> {
  await db
    .update(apiTokens)
    .set({ revokedAt: at })
    .where(and(eq(apiTokens.id, id), isNull(apiTokens.revokedAt)));
  return findToken(db, id);
}

/**
 * Records a use, unless one was recorded in the last `minIntervalMs` (another isolate may have
 * done it): at most one write a minute per token, however busy it is.
 */
export async function touchToken(db: Db, id: string, at: number, minIntervalMs: number): Promise<void> {
  await db
    .update(apiTokens)
    .set({ lastUsedAt: at })
    .where(and(eq(apiTokens.id, id), or(isNull(apiTokens.lastUsedAt), lt(apiTokens.lastUsedAt, at - minIntervalMs))));
}
