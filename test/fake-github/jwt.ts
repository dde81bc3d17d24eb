/** RS256 JWT verification for the fake GitHub, with WebCrypto (Node and workerd alike). */

const decoder = new TextDecoder();

function b64urlBytes(s: string): Uint8Array<ArrayBuffer> {
  const normal = s.replaceAll("-", "+").replaceAll("_", "/");
  const bin = atob(normal + "=".repeat((4 - (normal.length % 4)) % 4));
  return Uint8Array.from(bin, (c) => c.charCodeAt(0));
}

export async function importPublicKey(pem: string): Promise<CryptoKey> {
  const m = /-----BEGIN PUBLIC KEY-----([\s\S]+?)-----END PUBLIC KEY-----/.exec(pem);
  if (!m) throw new Error("app public key must be an SPKI PEM (BEGIN PUBLIC KEY)");
  return crypto.subtle.importKey("spki", b64urlBytes(m[1]!.replace(/\s+/g, "")), { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" }, false, [
    "verify",
  ]);
}

export interface JwtClaims {
  iat?: number;
  exp?: number;
  iss?: string | number;
}

export const looksLikeJwt = (token: string) => /^[\w-]+\.[\w-]+\.[\w-]+$/.test(token);

/** Decodes without verifying (to find the issuer whose key verifies it). */
export function decodeJwt(token: string): { header: { alg?: string; typ?: string }; claims: JwtClaims } | null {
  try {
    const [h, p] = token.split(".");
    return { header: JSON.parse(decoder.decode(b64urlBytes(h!))), claims: JSON.parse(decoder.decode(b64urlBytes(p!))) };
  } catch {
    return null;
  }
}

export async function verifyJwtSignature(token: string, key: CryptoKey): Promise<boolean> {
  const [h, p, s] = token.split(".");
  try {
    return await crypto.subtle.verify("RSASSA-PKCS1-v1_5", key, b64urlBytes(s!), new TextEncoder().encode(`${h}.${p}`));
  } catch {
    return false;
  }
}

/**
 * GitHub's checks on App JWT times: issued-at not in the future (a little skew allowed),
 * expiry in the future and at most 10 minutes after issued-at. Returns GitHub's wording.
 */
export function jwtTimeProblem(claims: JwtClaims, nowS: number): string | null {
  if (typeof claims.iat !== "number") return "Missing 'issued at' claim ('iat') in the supplied JWT.";
  if (typeof claims.exp !== "number") return "Missing 'expiration time' claim ('exp') in the supplied JWT.";
  if (claims.iat > nowS + 30) return "'Issued at' claim ('iat') must be an Integer representing a time in the past.";
  if (claims.exp <= nowS)
    return "'Expiration time' claim ('exp') must be a numeric value representing the future time at which the assertion expires.";
  if (claims.exp - claims.iat > 600) return "'Expiration time' claim ('exp') is too far in the future";
  return null;
}
