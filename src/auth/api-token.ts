import { toBase64Url } from "../crypto/base64url";
import { sha256Hex } from "../crypto/sha256";

/**
 * Named API tokens: `edr_` and 32 random bytes (base64url). The prefix lets secret scanners
 * (GitHub's push protection, trufflehog, gitleaks) recognise a leaked token, and lets the
 * coordinator tell a named token from ADMIN_TOKEN without a lookup.
 *
 * Stored as SHA-256, not bcrypt/scrypt/argon2: a slow hash protects guessable secrets
 * (passwords); these have 256 bits of entropy, so no dictionary or brute force gets anywhere,
 * and a fast hash keeps the per-request check a single indexed D1 lookup by hash.
 */
export const TOKEN_PREFIX = "edr_";
const TOKEN_PATTERN = /^edr_[A-Za-z0-9_-]{43}$/;

export function newApiToken(): string {
  return `${TOKEN_PREFIX}${toBase64Url(crypto.getRandomValues(new Uint8Array(32)))}`;
}

/** Whether `token` has a named token's shape (it may still be unknown or revoked). */
export const looksLikeApiToken = (token: string): boolean => TOKEN_PATTERN.test(token);

/** The hex SHA-256 stored for a token and looked up by. */
export const hashApiToken = (token: string): Promise<string> => sha256Hex(token);
