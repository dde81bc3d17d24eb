import { toBase64Url } from "../crypto/base64url";
import { constantTimeEqual } from "../crypto/constant-time";

/**
 * Dashboard sessions: after a login with the admin token, the browser holds a signed,
 * expiring session (never the token itself). The signing key is derived from ADMIN_TOKEN,
 * so rotating the token ends every session. CSRF tokens are bound to the session: an HMAC of
 * its nonce, which a page from another origin can neither read nor compute.
 */

export const SESSION_COOKIE = "edgerunner_session";
export const SESSION_TTL_MS = 8 * 60 * 60_000;

const enc = new TextEncoder();

async function hmac(key: string | CryptoKey, data: string): Promise<string> {
  const k =
    typeof key === "string"
      ? await crypto.subtle.importKey("raw", enc.encode(key), { name: "HMAC", hash: "SHA-256" }, false, ["sign"])
      : key;
  return toBase64Url(await crypto.subtle.sign("HMAC", k, enc.encode(data)));
}

/** The key sessions are signed with: not the admin token, but derived from it. */
async function sessionKey(adminToken: string): Promise<string> {
  return hmac(adminToken, "edgerunner/ui-session/v1");
}

export interface Session {
  nonce: string;
  expiresAt: number;
}

export async function createSession(adminToken: string, now = Date.now()): Promise<{ cookie: string; session: Session }> {
  const nonce = toBase64Url(crypto.getRandomValues(new Uint8Array(18)));
  const expiresAt = now + SESSION_TTL_MS;
  const body = `v1.${expiresAt}.${nonce}`;
  return { cookie: `${body}.${await hmac(await sessionKey(adminToken), body)}`, session: { nonce, expiresAt } };
}

export async function readSession(adminToken: string, cookie: string | undefined, now = Date.now()): Promise<Session | null> {
  if (!cookie) return null;
  const m = /^v1\.(\d{1,15})\.([A-Za-z0-9_-]{1,64})\.([A-Za-z0-9_-]{1,64})$/.exec(cookie);
  if (!m) return null;
  const [, exp, nonce, sig] = m;
  const expected = await hmac(await sessionKey(adminToken), `v1.${exp}.${nonce}`);
  if (!(await constantTimeEqual(sig!, expected))) return null;
  const expiresAt = Number(exp);
  if (!(expiresAt > now)) return null;
  return { nonce: nonce!, expiresAt };
}

export async function csrfToken(adminToken: string, session: Session): Promise<string> {
  return hmac(await sessionKey(adminToken), `csrf.${session.nonce}`);
}

export async function checkCsrf(adminToken: string, session: Session, given: unknown): Promise<boolean> {
  if (typeof given !== "string" || !given) return false;
  return constantTimeEqual(given, await csrfToken(adminToken, session));
}
