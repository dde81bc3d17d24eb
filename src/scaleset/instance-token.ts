import { sign, verify } from "hono/jwt";
import { isCanonicalBase64Url } from "../crypto/secret-box";

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
  return sign({ ...payload }, secret, "HS256");
}

/** The claims of a valid, unexpired token, or null. */
export async function readInstanceToken(secret: string, token: string): Promise<InstanceTokenClaims | null> {
  // A token has one spelling: the JWT library decodes padded or re-spelt segments to the same bytes.
  const segments = token.split(".");
  if (segments.length !== 3 || !segments.every(isCanonicalBase64Url)) return null;
  try {
    const claims = (await verify(token, secret, "HS256")) as unknown as InstanceTokenClaims;
    if (typeof claims.sub !== "string" || typeof claims.ss !== "string" || typeof claims.att !== "number") return null;
    return claims;
  } catch {
    return null;
  }
}
