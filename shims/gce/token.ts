import type { ServiceAccount } from "./config.ts";

/**
 * OAuth2 access tokens for the service account, minted with WebCrypto: an RS256-signed JWT
 * (iss = the account, scope, aud = the key's token_uri, iat, exp an hour later: Google's maximum)
 * exchanged at the token URI with grant_type urn:ietf:params:oauth:grant-type:jwt-bearer.
 * Tokens are kept per isolate until five minutes before they expire, so one create's dozen
 * calls (and the next requests) sign nothing; concurrent requests share one exchange.
 */

export const COMPUTE_SCOPE = "https://www.googleapis.com/auth/compute";
const LIFETIME_S = 3600;
const REFRESH_BEFORE_MS = 5 * 60_000;

export type TokenResult = { ok: true; token: string } | { ok: false; status: number; code: string; message: string };

const cache = new Map<string, { token: string; expiresAt: number } | Promise<TokenResult>>();
const keys = new Map<string, Promise<CryptoKey>>();

const b64url = (bytes: Uint8Array) =>
  btoa(String.fromCharCode(...bytes))
    .replace(/\+/g, "-")
    .replace(/\//g, "_")
    .replace(/=+$/, "");
const b64urlJson = (v: unknown) => b64url(new TextEncoder().encode(JSON.stringify(v)));

function importKey(pem: string): Promise<CryptoKey> {
  let k = keys.get(pem);
  if (!k) {
    const der = Uint8Array.from(atob(pem.replace(/-----(BEGIN|END) PRIVATE KEY-----|\s+/g, "")), (c) => c.charCodeAt(0));
    k = crypto.subtle.importKey("pkcs8", der, { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" }, false, ["sign"]);
    keys.set(pem, k);
    k.catch(() => keys.delete(pem));
  }
  return k;
}

/** The signed assertion for `account` at `nowS` (unix seconds). */
export async function signAssertion(account: ServiceAccount, scope: string, nowS: number): Promise<string> {
  const header = { alg: "RS256", typ: "JWT", ...(account.privateKeyId ? { kid: account.privateKeyId } : {}) };
  const claims = { iss: account.clientEmail, scope, aud: account.tokenUri, iat: nowS, exp: nowS + LIFETIME_S };
  const input = `${b64urlJson(header)}.${b64urlJson(claims)}`;
  const sig = await crypto.subtle.sign("RSASSA-PKCS1-v1_5", await importKey(account.privateKeyPem), new TextEncoder().encode(input));
  return `${input}.${b64url(new Uint8Array(sig))}`;
}

async function exchange(account: ServiceAccount, scope: string, timeoutMs: number, now: () => number): Promise<TokenResult> {
  let assertion: string;
  try {
    assertion = await signAssertion(account, scope, Math.floor(now() / 1000));
  } catch (err) {
    return { ok: false, status: 0, code: "bad_key", message: `cannot sign with the key's private_key: ${(err as Error).message}` };
  }
  let res: Response;
  let body: { access_token?: string; expires_in?: number; error?: string; error_description?: string };
  try {
    res = await fetch(account.tokenUri, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ grant_type: "urn:ietf:params:oauth:grant-type:jwt-bearer", assertion }).toString(),
      signal: AbortSignal.timeout(timeoutMs),
    });
    body = await res.json();
  } catch (err) {
    return { ok: false, status: 0, code: "NetworkError", message: `no token from ${account.tokenUri}: ${(err as Error).message}` };
  }
  if (!res.ok || typeof body.access_token !== "string")
    return {
      ok: false,
      status: res.status,
      code: body.error ?? "token_error",
      message: `${account.tokenUri} answered ${res.status}: ${body.error ?? ""} ${body.error_description ?? ""}`.trim(),
    };
  const ttl = typeof body.expires_in === "number" ? body.expires_in : LIFETIME_S;
  cache.set(cacheKey(account, scope), { token: body.access_token, expiresAt: now() + ttl * 1000 });
  return { ok: true, token: body.access_token };
}

const cacheKey = (a: ServiceAccount, scope: string) => [a.tokenUri, a.clientEmail, a.privateKeyId, scope].join("\n");

export async function accessToken(
  account: ServiceAccount,
  opts: { scope?: string; timeoutMs: number; now?: () => number },
): Promise<TokenResult> {
  const scope = opts.scope ?? COMPUTE_SCOPE;
  const now = opts.now ?? Date.now;
  const key = cacheKey(account, scope);
  const hit = cache.get(key);
  if (hit instanceof Promise) return hit;
  if (hit && hit.expiresAt - REFRESH_BEFORE_MS > now()) return { ok: true, token: hit.token };
  const pending = exchange(account, scope, opts.timeoutMs, now);
  cache.set(key, pending);
  const r = await pending;
  if (!r.ok) cache.delete(key);
  return r;
}

/** Drops a token GCE refused (401), so the next call mints another. */
export const forgetToken = (account: ServiceAccount, scope = COMPUTE_SCOPE) => cache.delete(cacheKey(account, scope));
