import { constantTimeEqual } from "../crypto/constant-time";

/**
 * Request signing for the provider shim protocol, both directions (coordinator → shim and
 * shim → coordinator callbacks):
 *
 *   X-Edgerunner-Timestamp: <unix seconds>
 *   X-Edgerunner-Signature: sha256=<hex HMAC-SHA256(secret, ts "\n" METHOD "\n" path-with-query "\n" raw body)>
 *
 * `path-with-query` is the request target exactly as sent on the wire: the URL's path
 * (percent-encoding untouched, including any base path of the provider URL) plus `?query`
 * when there is one. Pure: WebCrypto only, the clock is injected.
 */

export const MAX_CLOCK_SKEW_SECONDS = 300;
export const SIGNATURE_PREFIX = "sha256=";

export type SignedBody = string | Uint8Array;

export interface SignedRequestParts {
  method: string;
  /** The request target as sent: `/base/v1/instances/abc?x=1`. */
  pathWithQuery: string;
  body: SignedBody;
}

const encoder = new TextEncoder();

/** The request target of a URL as an HTTP client puts it on the request line. */
export function requestTarget(url: string | URL): string {
  const u = typeof url === "string" ? new URL(url) : url;
  return u.pathname + u.search;
}

/** The exact bytes that are signed. */
export function signingInput(timestamp: string, parts: SignedRequestParts): Uint8Array<ArrayBuffer> {
  const head = encoder.encode(`${timestamp}\n${parts.method.toUpperCase()}\n${parts.pathWithQuery}\n`);
  const body = typeof parts.body === "string" ? encoder.encode(parts.body) : parts.body;
  const out = new Uint8Array(head.length + body.length);
  out.set(head, 0);
  out.set(body, head.length);
  return out;
}

const keys = new Map<string, Promise<CryptoKey>>();

function hmacKey(secret: string): Promise<CryptoKey> {
  let key = keys.get(secret);
  if (!key) {
    key = crypto.subtle.importKey("raw", encoder.encode(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
    // A handful of providers per isolate; the bound only stops a rotating secret from growing the map.
    if (keys.size > 64) keys.clear();
    keys.set(secret, key);
  }
  return key;
}

const hex = (bytes: ArrayBuffer) => [...new Uint8Array(bytes)].map((b) => b.toString(16).padStart(2, "0")).join("");

/** `sha256=<lowercase hex>` for the given timestamp and request. */
export async function computeSignature(secret: string, timestamp: string, parts: SignedRequestParts): Promise<string> {
  const mac = await crypto.subtle.sign("HMAC", await hmacKey(secret), signingInput(timestamp, parts));
  return SIGNATURE_PREFIX + hex(mac);
}

export interface SignatureHeaders {
  "X-Edgerunner-Timestamp": string;
  "X-Edgerunner-Signature": string;
}

/** The two headers that authenticate a request sent at `nowMs`. */
export async function signRequest(secret: string, parts: SignedRequestParts, nowMs: number = Date.now()): Promise<SignatureHeaders> {
  const timestamp = String(Math.floor(nowMs / 1000));
  return {
    "X-Edgerunner-Timestamp": timestamp,
    "X-Edgerunner-Signature": await computeSignature(secret, timestamp, parts),
  };
}

export type SignatureRejection =
  | "missing_timestamp"
  | "malformed_timestamp"
  | "stale_timestamp"
  | "missing_signature"
  | "malformed_signature"
  | "bad_signature";

export type SignatureCheck = { ok: true } | { ok: false; reason: SignatureRejection };

export interface ReceivedSignature {
  timestamp: string | null | undefined;
  signature: string | null | undefined;
}

/**
 * Checks a received request. The timestamp is checked first (cheap, and it bounds replay),
 * then the MAC in constant time. Every failure means 401 to the sender.
 */
export async function verifySignature(
  secret: string,
  parts: SignedRequestParts,
  received: ReceivedSignature,
  now: () => number = Date.now,
): Promise<SignatureCheck> {
  const { timestamp, signature } = received;
  if (!timestamp) return { ok: false, reason: "missing_timestamp" };
  if (!/^\d{1,12}$/.test(timestamp)) return { ok: false, reason: "malformed_timestamp" };
  if (Math.abs(Math.floor(now() / 1000) - Number(timestamp)) > MAX_CLOCK_SKEW_SECONDS) return { ok: false, reason: "stale_timestamp" };
  if (!signature) return { ok: false, reason: "missing_signature" };
  if (!/^sha256=[0-9a-fA-F]{64}$/.test(signature)) return { ok: false, reason: "malformed_signature" };
  const expected = await computeSignature(secret, timestamp, parts);
  const given = SIGNATURE_PREFIX + signature.slice(SIGNATURE_PREFIX.length).toLowerCase();
  return (await constantTimeEqual(given, expected)) ? { ok: true } : { ok: false, reason: "bad_signature" };
}
