import { sign, verify } from "hono/jwt";
import { isCanonicalBase64url } from "../../crypto/base64url";

/**
 * The token a runner instance calls back with: names the instance, its scale set and the
 * create attempt it belongs to, and expires at bootstrap timeout + 5 minutes (GARM's rule).
 */
export interface InstanceTokenClaims {
  /** instance name */
  sub: string;
  /** scale set id */
  ss: string;
  /** create attempt */
  att: number;
  exp: number;
  iat: number;
}

export const TOKEN_GRACE_SECONDS = 5 * 60;

// Importing the HMAC key is a WebCrypto call that hono's sign/verify would make for every token
// (a booting machine presents its token on ~8 requests); an isolate imports it once while the
// secret stays the same.
let cachedKey: { secret: string; key: Promise<CryptoKey> } | undefined;

function hmacKey(secret: string): Promise<CryptoKey> {
  if (cachedKey?.secret !== secret) {
    const key = crypto.subtle.importKey("raw", new TextEncoder().encode(secret), { name: "HMAC", hash: "SHA-256" }, false, [
      "sign",
      "verify",
    ]);
    key.catch(() => {
      if (cachedKey?.key === key) cachedKey = undefined;
    });
    cachedKey = { secret, key };
  }
  return cachedKey.key;
}

export async function mintInstanceToken(
  secret: string,
  claims: { instance: string; scaleSetId: string; createAttempt: number; bootstrapTimeoutMinutes: number },
  nowMs: number,
): Promise<string> {
  if (!secret) throw new Error("INSTANCE_TOKEN_SECRET is not set");
  const iat = Math.floor(nowMs / 1000);
  const payload: InstanceTokenClaims = {
    sub: claims.instance,
    ss: claims.scaleSetId,
    att: claims.createAttempt,
    iat,
    exp: iat + claims.bootstrapTimeoutMinutes * 60 + TOKEN_GRACE_SECONDS,
  };
  return sign({ ...payload }, await hmacKey(secret), "HS256");
}

/**
 * The claims of a valid, unexpired token, or null. Only the exact string we minted verifies:
 * a lenient base64url decoder would also accept padding or other low bits in the last
 * character of the signature.
 */
export async function readInstanceToken(secret: string, token: string): Promise<InstanceTokenClaims | null> {
  const parts = token.split(".");
  if (parts.length !== 3 || !parts.every((p) => p.length > 0 && isCanonicalBase64url(p))) return null;
  try {
    const claims = (await verify(token, await hmacKey(secret), "HS256")) as unknown as InstanceTokenClaims;
    if (typeof claims.sub !== "string" || typeof claims.ss !== "string" || typeof claims.att !== "number") return null;
    return claims;
  } catch {
    return null;
  }
}
