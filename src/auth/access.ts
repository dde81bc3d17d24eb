import { createRemoteJWKSet, errors, type JWTPayload, jwtVerify } from "jose";
import type { TokenScope } from "../db/access/schema";
import type { Env } from "../env";

/**
 * Cloudflare Access (Zero Trust) in front of the coordinator: Access signs a JWT for every
 * request it lets through and sends it as `Cf-Access-Jwt-Assertion`. We verify it ourselves
 * (a request that reached the Worker some other way, e.g. workers.dev, must not pass) with the
 * team's public keys, RS256 only, and this application's audience (AUD tag). See docs/operations.md.
 */

export const ACCESS_HEADER = "cf-access-jwt-assertion";

export interface AccessConfig {
  /** `https://<team>.cloudflareaccess.com`: the JWT's `iss`. */
  issuer: string;
  /** The Access application's AUD tag: the JWT's `aud` must contain it. */
  audience: string;
  certsUrl: string;
  /** What an Access identity may do: ACCESS_SCOPE, admin unless set to read. */
  scope: TokenScope;
}

/** The team's domain as people write it: `myteam`, `myteam.cloudflareaccess.com` or its URL. */
export function teamDomain(value: string): string | null {
  const host = value
    .trim()
    .replace(/^https?:\/\//i, "")
    .replace(/\/+$/, "")
    .toLowerCase();
  if (!/^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/.test(host)) return null;
  return host.includes(".") ? host : `${host}.cloudflareaccess.com`;
}

export type AccessSettings = Pick<Env, "ACCESS_TEAM_DOMAIN" | "ACCESS_AUD" | "ACCESS_CERTS_URL" | "ACCESS_SCOPE">;

/**
 * Access sign-in is on when both ACCESS_TEAM_DOMAIN and ACCESS_AUD are set; null when it is off.
 * An ACCESS_SCOPE other than `admin` or `read` (or unset) means admin only when unset: a typo
 * gives the lesser scope, never the greater.
 */
export function accessConfig(env: AccessSettings): AccessConfig | null {
  const domain = env.ACCESS_TEAM_DOMAIN?.trim() ? teamDomain(env.ACCESS_TEAM_DOMAIN) : null;
  const audience = env.ACCESS_AUD?.trim();
  if (!domain || !audience) return null;
  const issuer = `https://${domain}`;
  const scopeVar = env.ACCESS_SCOPE?.trim().toLowerCase();
  return {
    issuer,
    audience,
    certsUrl: env.ACCESS_CERTS_URL?.trim() || `${issuer}/cdn-cgi/access/certs`,
    scope: scopeVar === undefined || scopeVar === "" || scopeVar === "admin" ? "admin" : "read",
  };
}

// One key set per certs URL per isolate: jose caches the keys (10 minutes) and refetches on an
// unknown `kid` at most every 30 seconds, so a key rotation is picked up without a flood of fetches.
const keySets = new Map<string, ReturnType<typeof createRemoteJWKSet>>();

function keySet(url: string) {
  let set = keySets.get(url);
  if (!set) {
    set = createRemoteJWKSet(new URL(url), { cooldownDuration: 30_000, cacheMaxAge: 10 * 60_000, timeoutDuration: 5_000 });
    keySets.set(url, set);
  }
  return set;
}

/**
 * `unavailable`: the team's keys could not be fetched (Cloudflare unreachable, a wrong
 * ACCESS_CERTS_URL): nobody's fault on the client side, so it is a 503 and not counted as a guess.
 */
export type AccessResult = { ok: true; identity: string } | { ok: false; reason: string; unavailable?: true };

/** Verifies an Access JWT; the identity is its `email` (a service token's `common_name` when it has none). */
export async function verifyAccessJwt(config: AccessConfig, jwt: string): Promise<AccessResult> {
  let payload: JWTPayload;
  try {
    ({ payload } = await jwtVerify(jwt, keySet(config.certsUrl), {
      issuer: config.issuer,
      audience: config.audience,
      algorithms: ["RS256"],
      requiredClaims: ["exp"],
    }));
  } catch (e) {
    if (keysUnavailable(e)) return { ok: false, reason: "the team's Access keys could not be fetched", unavailable: true };
    return { ok: false, reason: accessFailure(e) };
  }
  const identity =
    typeof payload.email === "string" && payload.email ? payload.email : typeof payload.common_name === "string" ? payload.common_name : "";
  if (!identity) return { ok: false, reason: "the Access token names no identity (email)" };
  return { ok: true, identity };
}

/**
 * The key set's fetch failed: no connection (the runtime's own error: jose wraps everything it
 * checks in its JOSEError classes), a timeout, not a 200, not a JWKS.
 */
function keysUnavailable(e: unknown): boolean {
  if (e instanceof errors.JWKSTimeout || e instanceof errors.JWKSInvalid) return true;
  if (e instanceof errors.JOSEError) return e.code === "ERR_JOSE_GENERIC";
  return true;
}

/** Why a JWT was refused, in words safe to return (never the token). */
function accessFailure(e: unknown): string {
  if (e instanceof errors.JWTExpired) return "the Access token has expired";
  if (e instanceof errors.JWTClaimValidationFailed) return `the Access token's ${e.claim} claim is wrong`;
  if (e instanceof errors.JOSEAlgNotAllowed) return "the Access token is not signed with RS256";
  if (e instanceof errors.JWKSNoMatchingKey) return "the Access token's key is not one of the team's keys";
  if (e instanceof errors.JWSSignatureVerificationFailed) return "the Access token's signature does not verify";
  if (e instanceof errors.JWTInvalid || e instanceof errors.JWSInvalid) return "the Access token is malformed";
  return "the Access token could not be verified";
}
