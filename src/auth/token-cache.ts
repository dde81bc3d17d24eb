import type { TokenLookup } from "../db/access/api-token-store";

/**
 * What this isolate recently learned about named tokens, by hash, so that a busy client costs
 * one D1 lookup per TOKEN_CACHE_MS rather than one per request.
 *
 * The price is revocation latency: the isolate that handles `DELETE /api/v1/tokens/{id}` forgets
 * the token at once, and every other isolate within TOKEN_CACHE_MS (at most 10 s). Expiry is
 * checked on every request against the cached `expires_at`, so it is exact. Only tokens that
 * exist are cached: a wrong token is looked up (and counted by the auth throttle) every time.
 */
export const TOKEN_CACHE_MS = 10_000;
/** `last_used_at` is written at most this often per token. */
export const LAST_USED_INTERVAL_MS = 60_000;
const MAX_ENTRIES = 1_000;

const cache = new Map<string, { token: TokenLookup; fetchedAt: number }>();

export function cachedToken(hash: string, now = Date.now()): TokenLookup | null {
  const hit = cache.get(hash);
  if (!hit) return null;
  if (now - hit.fetchedAt >= TOKEN_CACHE_MS || now < hit.fetchedAt) {
    cache.delete(hash);
    return null;
  }
  return hit.token;
}

export function rememberToken(hash: string, token: TokenLookup, now = Date.now()): void {
  if (!cache.has(hash) && cache.size >= MAX_ENTRIES) cache.delete(cache.keys().next().value!);
  cache.set(hash, { token, fetchedAt: now });
}

/** Drops a token (revoked here): this isolate refuses it from the next request on. */
export function forgetToken(id: string): void {
  for (const [hash, { token }] of cache) if (token.id === id) cache.delete(hash);
}

export type TokenVerdict = "ok" | "revoked" | "expired";

/** Whether a stored token may be used now. */
export function tokenVerdict(token: Pick<TokenLookup, "expiresAt" | "revokedAt">, now = Date.now()): TokenVerdict {
  if (token.revokedAt !== null) return "revoked";
  if (token.expiresAt !== null && token.expiresAt <= now) return "expired";
  return "ok";
}

/** Whether this use should be written to `last_used_at` (the last one written is older than a minute). */
export const dueForTouch = (lastUsedAt: number | null, now = Date.now()): boolean =>
  lastUsedAt === null || now - lastUsedAt >= LAST_USED_INTERVAL_MS;
