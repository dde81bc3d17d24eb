import { and, eq } from "drizzle-orm";
import type { Db } from "../client";
import { type Forge, githubCache, githubCredentialState, githubCredentials, githubEndpoints } from "./schema";

/**
 * D1 access for what every isolate must agree on about GitHub: each credential's shared state
 * (health, rate-limit window, installation token) and the cache of slow-changing facts
 * (runner groups, runner downloads).
 */

export type CredentialRow = typeof githubCredentials.$inferSelect;
export type CredentialStateRow = typeof githubCredentialState.$inferSelect;

/** A credential with everything a call needs: where to send it and the shared state. */
export interface CredentialContext {
  credential: CredentialRow;
  endpointName: string;
  /** The endpoint's forge: how a token is presented (GitHub: Bearer; Gitea and Forgejo: token). */
  forge: Forge;
  apiBaseUrl: string;
  /** The endpoint's web URL (https://github.com, https://ghes.example): runner config URLs start here. */
  baseUrl: string;
  state: CredentialStateRow | null;
}

/** One query: the credential, its endpoint's API URL and its shared state. */
export async function loadCredentialContext(db: Db, credentialId: string): Promise<CredentialContext | null> {
  const [row] = await db
    .select({
      credential: githubCredentials,
      apiBaseUrl: githubEndpoints.apiBaseUrl,
      baseUrl: githubEndpoints.baseUrl,
      forge: githubEndpoints.forge,
      state: githubCredentialState,
    })
    .from(githubCredentials)
    .innerJoin(githubEndpoints, eq(githubEndpoints.name, githubCredentials.endpointName))
    .leftJoin(githubCredentialState, eq(githubCredentialState.credentialId, githubCredentials.id))
    .where(eq(githubCredentials.id, credentialId));
  if (!row) return null;
  return {
    credential: row.credential,
    endpointName: row.credential.endpointName,
    forge: row.forge,
    apiBaseUrl: row.apiBaseUrl.replace(/\/+$/, ""),
    baseUrl: row.baseUrl.replace(/\/+$/, ""),
    state: row.state,
  };
}

export type StatePatch = Partial<Omit<CredentialStateRow, "credentialId" | "updatedAt">>;

const COLUMNS: Record<keyof StatePatch, string> = {
  health: "health",
  failureReason: "failure_reason",
  failedAt: "failed_at",
  rateLimitLimit: "rate_limit_limit",
  rateLimitRemaining: "rate_limit_remaining",
  rateLimitUsed: "rate_limit_used",
  rateLimitResetAt: "rate_limit_reset_at",
  rateLimitResource: "rate_limit_resource",
  rateLimitObservedAt: "rate_limit_observed_at",
  blockedUntil: "blocked_until",
  rateLimitStrikes: "rate_limit_strikes",
  tokenEnc: "token_enc",
  tokenExpiresAt: "token_expires_at",
};

/**
 * Upserts part of a credential's shared state — only while the credential is still the one
 * the caller loaded (same `updated_at`). A call that was in flight when an operator replaced
 * the token cannot mark the new token failing, nor store a token minted with the old key.
 * Returns whether the write happened.
 */
export async function writeCredentialState(
  d1: D1Database,
  credential: Pick<CredentialRow, "id" | "updatedAt">,
  patch: StatePatch,
  now: number,
): Promise<boolean> {
  const keys = (Object.keys(patch) as (keyof StatePatch)[]).filter((k) => patch[k] !== undefined);
  const cols = ["credential_id", "updated_at", ...keys.map((k) => COLUMNS[k])];
  const values = [credential.id, now, ...keys.map((k) => patch[k] as string | number | null)];
  const sets = cols.slice(1).map((c) => `${c} = excluded.${c}`);
  const sql =
    `INSERT INTO github_credential_state (${cols.join(", ")}) ` +
    `SELECT ${cols.map(() => "?").join(", ")} ` +
    `WHERE EXISTS (SELECT 1 FROM github_credentials WHERE id = ? AND updated_at = ?) ` +
    `ON CONFLICT(credential_id) DO UPDATE SET ${sets.join(", ")}`;
  const result = await d1
    .prepare(sql)
    .bind(...values, credential.id, credential.updatedAt)
    .run();
  return (result.meta.changes ?? 0) > 0;
}

/** Forget failing state, rate-limit waits and tokens: the credential changed. */
export const clearCredentialState = (db: Db, credentialId: string) =>
  db.delete(githubCredentialState).where(eq(githubCredentialState.credentialId, credentialId));

export interface Cached<T> {
  value: T;
  fetchedAt: number;
}

export async function readCache<T>(db: Db, endpointName: string, key: string): Promise<Cached<T> | null> {
  const [row] = await db
    .select({ value: githubCache.value, fetchedAt: githubCache.fetchedAt })
    .from(githubCache)
    .where(and(eq(githubCache.endpointName, endpointName), eq(githubCache.key, key)));
  return row ? { value: row.value as T, fetchedAt: row.fetchedAt } : null;
}

export async function writeCache(db: Db, endpointName: string, key: string, value: unknown, fetchedAt: number): Promise<void> {
  await db
    .insert(githubCache)
    .values({ endpointName, key, value, fetchedAt })
    .onConflictDoUpdate({ target: [githubCache.endpointName, githubCache.key], set: { value, fetchedAt } });
}
