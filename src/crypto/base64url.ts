/** Unpadded base64url (RFC 4648 §5), as JWTs and our cookies use it. */
const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

export function encodeBase64url(bytes: ArrayBuffer | Uint8Array): string {
  const b = bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes);
  let s = "";
  for (const x of b) s += String.fromCharCode(x);
  return btoa(s).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
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
