import { createExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { importJWK, type JWTPayload, SignJWT } from "jose";
import { inject } from "vitest";
import { createApp } from "../../src/app";
import type { Env } from "../../src/env";

/**
 * Cloudflare Access in front of the coordinator, played by the JWKS server of
 * test/fake-access/global-setup.ts: the tests sign the `Cf-Access-Jwt-Assertion` JWTs Access
 * would send (accessJwt), and `send` runs the app with the Access vars pointing at that server
 * (accessEnv). Shared by access.test.ts and the tests that read the API as an Access identity.
 */

const ORIGIN = "https://edgerunner.test";
const TEAM = "edgerunner-test";
const ISSUER = `https://${TEAM}.cloudflareaccess.com`;
const AUD = "4714c1358e65fe4b408ad6d432a5f878f08194bdb4752441fd56faefa9b2b6f2";
const app = createApp();

export function accessEnv(over: Partial<Env> = {}): Env {
  return { ...env, ACCESS_TEAM_DOMAIN: TEAM, ACCESS_AUD: AUD, ACCESS_CERTS_URL: inject("accessCertsUrl"), ...over } as Env;
}

export interface SendOptions {
  jwt?: string;
  /** Sent as JSON. */
  body?: unknown;
  /** Sent as a form, as the dashboard's buttons do. */
  form?: Record<string, string>;
  env?: Env;
  headers?: Record<string, string>;
}

export async function send(method: string, path: string, opts: SendOptions = {}) {
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.jwt) headers["cf-access-jwt-assertion"] = opts.jwt;
  let payload: string | undefined;
  if (opts.body !== undefined) {
    headers["content-type"] = "application/json";
    payload = JSON.stringify(opts.body);
  } else if (opts.form) {
    headers["content-type"] = "application/x-www-form-urlencoded";
    payload = new URLSearchParams(opts.form).toString();
  }
  const ctx = createExecutionContext();
  const res = await app.fetch(
    new Request(`${ORIGIN}${path}`, { method, headers, body: payload, redirect: "manual" }),
    opts.env ?? accessEnv(),
    ctx,
  );
  const text = await res.text();
  let body: any = text;
  try {
    body = JSON.parse(text);
  } catch {
    // HTML
  }
  return { status: res.status, body, text, headers: res.headers };
}

const teamKey = (alg = "RS256") => {
  const { alg: _, ...jwk } = inject("accessSigningJwk");
  return importJWK(jwk as any, alg);
};
const KID = String(inject("accessSigningJwk").kid);

interface JwtOptions {
  alg?: string;
  kid?: string;
  key?: CryptoKey | Uint8Array;
  exp?: number | string;
  iss?: string;
  aud?: string[];
}

export async function accessJwt(claims: JWTPayload = {}, opts: JwtOptions = {}) {
  const alg = opts.alg ?? "RS256";
  return new SignJWT({ email: "ana@example.com", type: "app", ...claims })
    .setProtectedHeader({ alg, kid: opts.kid ?? KID })
    .setIssuer(opts.iss ?? ISSUER)
    .setAudience(opts.aud ?? [AUD])
    .setIssuedAt()
    .setExpirationTime(opts.exp ?? "5m")
    .sign(opts.key ?? ((await teamKey(alg)) as CryptoKey));
}
