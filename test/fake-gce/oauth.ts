import { createPublicKey, createVerify, generateKeyPairSync, randomBytes } from "node:crypto";
import type { ServiceAccountKey } from "./types.ts";

/**
 * Google's OAuth2 token endpoint for service accounts, as the fake plays it: the client posts
 * grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer and an RS256 JWT assertion signed with
 * the key file's private key (claims iss = client_email, scope, aud = token_uri, iat, exp at most
 * an hour after iat). The fake verifies the signature against the account's public key and the
 * claims, then answers {access_token, expires_in, token_type}. Errors are OAuth2's
 * {error, error_description} with 400 (invalid_grant, invalid_request, unsupported_grant_type).
 */

export const JWT_GRANT = "urn:ietf:params:oauth:grant-type:jwt-bearer";
const MAX_LIFETIME_S = 3600;
const SKEW_S = 300;

export interface TokenGrant {
  scopes: string[];
  client_email: string;
}

export type TokenAnswer = { ok: true; grant: TokenGrant } | { ok: false; error: string; description: string };

/** A new service account key for a project, its token_uri pointing at the fake. */
export function newServiceAccountKey(projectId: string, tokenUri: string): { key: ServiceAccountKey; publicKeyPem: string } {
  const { privateKey, publicKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  const key: ServiceAccountKey = {
    type: "service_account",
    project_id: projectId,
    private_key_id: randomBytes(20).toString("hex"),
    private_key: privateKey.export({ type: "pkcs8", format: "pem" }).toString(),
    client_email: `edgerunner-shim@${projectId}.iam.gserviceaccount.com`,
    client_id: String(100000000000000000000n + BigInt(`0x${randomBytes(8).toString("hex")}`)),
    token_uri: tokenUri,
  };
  return { key, publicKeyPem: publicKey.export({ type: "spki", format: "pem" }).toString() };
}

const b64urlJson = (part: string): Record<string, unknown> | null => {
  try {
    const v = JSON.parse(Buffer.from(part, "base64url").toString("utf8"));
    return v && typeof v === "object" && !Array.isArray(v) ? v : null;
  } catch {
    return null;
  }
};

/** Checks one assertion for the account whose key is `publicKeyPem`, at `nowS` (unix seconds). */
export function verifyAssertion(
  form: URLSearchParams,
  account: { publicKeyPem: string; key: ServiceAccountKey },
  nowS: number,
): TokenAnswer {
  const bad = (error: string, description: string): TokenAnswer => ({ ok: false, error, description });
  if (form.get("grant_type") !== JWT_GRANT) return bad("unsupported_grant_type", "Invalid grant_type.");
  const assertion = form.get("assertion") ?? "";
  const parts = assertion.split(".");
  if (parts.length !== 3) return bad("invalid_request", "Invalid JWT: Token must be a short-lived token and in a reasonable timeframe");
  const [h, p, s] = parts as [string, string, string];
  const header = b64urlJson(h);
  const claims = b64urlJson(p);
  if (!header || !claims) return bad("invalid_grant", "Invalid JWT: not base64url JSON.");
  if (header.alg !== "RS256") return bad("invalid_grant", "Invalid JWT: alg must be RS256.");
  const verifier = createVerify("RSA-SHA256");
  verifier.update(`${h}.${p}`);
  if (!verifier.verify(createPublicKey(account.publicKeyPem), Buffer.from(s, "base64url")))
    return bad("invalid_grant", "Invalid JWT Signature.");
  if (claims.iss !== account.key.client_email) return bad("invalid_grant", "Invalid JWT: iss is not the service account.");
  if (claims.aud !== account.key.token_uri) return bad("invalid_grant", "Invalid JWT: aud must be the token URI.");
  const iat = claims.iat;
  const exp = claims.exp;
  if (typeof iat !== "number" || typeof exp !== "number") return bad("invalid_grant", "Invalid JWT: iat and exp are required.");
  if (exp - iat > MAX_LIFETIME_S || exp <= iat)
    return bad("invalid_grant", "Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe.");
  if (iat > nowS + SKEW_S || exp < nowS)
    return bad(
      "invalid_grant",
      "Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe. Check your iat and exp values.",
    );
  if (typeof claims.scope !== "string" || !claims.scope.trim()) return bad("invalid_scope", "Empty or missing scope not allowed.");
  return { ok: true, grant: { scopes: claims.scope.trim().split(/\s+/), client_email: String(claims.iss) } };
}
