/**
 * GitHub App authentication: an RS256 JWT signed with WebCrypto. GitHub hands out App keys
 * as PKCS#1 (`BEGIN RSA PRIVATE KEY`), WebCrypto only imports PKCS#8, so PKCS#1 keys are
 * wrapped in the fixed PKCS#8 envelope first.
 */

import { fromBase64, toBase64Url } from "../../crypto/base64url";

export class AppKeyError extends Error {}

const PEM = /-----BEGIN ((?:RSA )?PRIVATE KEY)-----([\s\S]+?)-----END \1-----/;

/** DER length octets. */
function derLength(n: number): number[] {
  if (n < 0x80) return [n];
  const bytes: number[] = [];
  for (let v = n; v > 0; v >>= 8) bytes.unshift(v & 0xff);
  return [0x80 | bytes.length, ...bytes];
}

const der = (tag: number, body: Uint8Array | number[]): Uint8Array => {
  const content = body instanceof Uint8Array ? body : Uint8Array.from(body);
  const head = [tag, ...derLength(content.length)];
  const out = new Uint8Array(head.length + content.length);
  out.set(head);
  out.set(content, head.length);
  return out;
};

const concat = (...parts: Uint8Array[]): Uint8Array => {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
};

// AlgorithmIdentifier { rsaEncryption (1.2.840.113549.1.1.1), NULL }
const RSA_ALGORITHM = Uint8Array.from([0x30, 0x0d, 0x06, 0x09, 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x01, 0x05, 0x00]);

/** PrivateKeyInfo { version 0, rsaEncryption, OCTET STRING { RSAPrivateKey } } */
export function pkcs1ToPkcs8(pkcs1: Uint8Array): Uint8Array {
  return der(0x30, concat(Uint8Array.from([0x02, 0x01, 0x00]), RSA_ALGORITHM, der(0x04, pkcs1)));
}

/** The PKCS#8 DER of a PEM private key in either form GitHub users will paste. */
export function privateKeyPkcs8(pem: string): Uint8Array {
  const match = PEM.exec(pem);
  if (!match) throw new AppKeyError("not a PEM private key");
  let body: Uint8Array;
  try {
    body = fromBase64(match[2]!.replace(/\s+/g, ""));
  } catch {
    throw new AppKeyError("PEM body is not base64");
  }
  return match[1] === "RSA PRIVATE KEY" ? pkcs1ToPkcs8(body) : body;
}

export async function importAppKey(pem: string): Promise<CryptoKey> {
  try {
    return await crypto.subtle.importKey("pkcs8", privateKeyPkcs8(pem), { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" }, false, ["sign"]);
  } catch (err) {
    if (err instanceof AppKeyError) throw err;
    throw new AppKeyError("private key does not import as an RSA key");
  }
}

const encoder = new TextEncoder();
const b64json = (v: unknown) => toBase64Url(encoder.encode(JSON.stringify(v)));

/** GitHub accepts at most 10 minutes; a little less leaves room for clock drift. */
export const APP_JWT_LIFETIME_S = 9 * 60;
/** Issued in the past, as GitHub recommends, in case GitHub's clock is behind ours. */
export const APP_JWT_BACKDATE_S = 60;

/** A JWT that authenticates as the App itself (only good for minting installation tokens). */
export async function createAppJwt(input: { appId: number | string; key: CryptoKey; now: number }): Promise<string> {
  const nowS = Math.floor(input.now / 1000);
  const signingInput = `${b64json({ alg: "RS256", typ: "JWT" })}.${b64json({
    iat: nowS - APP_JWT_BACKDATE_S,
    exp: nowS + APP_JWT_LIFETIME_S,
    iss: String(input.appId),
  })}`;
  const signature = await crypto.subtle.sign("RSASSA-PKCS1-v1_5", input.key, encoder.encode(signingInput));
  return `${signingInput}.${toBase64Url(new Uint8Array(signature))}`;
}
