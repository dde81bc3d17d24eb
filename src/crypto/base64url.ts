/** Base64url (RFC 4648 §5), unpadded as JWTs, sealed secrets and our cookies write it. */
const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

export function toBase64Url(bytes: ArrayBuffer | Uint8Array): string {
  const b = bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes);
  let binary = "";
  for (const x of b) binary += String.fromCharCode(x);
  return btoa(binary).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
}

/** Decodes base64 or base64url, padded or not (what GitHub and PEM files hand us). */
export function fromBase64(text: string): Uint8Array {
  const normal = text.replaceAll("-", "+").replaceAll("_", "/");
  const padded = normal + "=".repeat((4 - (normal.length % 4)) % 4);
  const binary = atob(padded);
  const out = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) out[i] = binary.charCodeAt(i);
  return out;
}

/**
 * Whether `s` is the one encoding of some bytes: alphabet only, no padding, a possible length,
 * and zero bits where the last character carries more bits than the bytes need. Lenient
 * decoders map several strings to the same bytes; a token that is not canonical was not made
 * by us, so it is refused rather than decoded.
 */
export function isCanonicalBase64url(s: string): boolean {
  if (!/^[A-Za-z0-9_-]*$/.test(s) || s.length % 4 === 1) return false;
  const unusedBits = s.length % 4 === 2 ? 4 : s.length % 4 === 3 ? 2 : 0;
  if (unusedBits === 0) return true;
  const last = ALPHABET.indexOf(s[s.length - 1]!);
  return (last & ((1 << unusedBits) - 1)) === 0;
}
