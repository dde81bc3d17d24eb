/**
 * Secrets at rest: AES-256-GCM with a random 96-bit IV per value.
 *
 * Sealed format: `er1.<key id>.<iv>.<ciphertext>` (base64url parts). The key id is
 * derived from the key itself, so rotating means: make the new key ENCRYPTION_KEY,
 * move the old one to ENCRYPTION_KEYS_PREVIOUS, and re-seal (POST /api/v1/secrets/rotate).
 * Every value is bound to where it is stored (the `context`, used as GCM additional data)
 * so a ciphertext copied into another row or column does not open.
 */

import { fromBase64, toBase64Url } from "./base64url";

const FORMAT = "er1";

export interface Keyring {
  current: SealingKey;
  byId: Map<string, SealingKey>;
}

interface SealingKey {
  id: string;
  key: CryptoKey;
}

export class KeyringError extends Error {}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

async function importKey(encoded: string, label: string): Promise<SealingKey> {
  let raw: Uint8Array;
  try {
    raw = fromBase64(encoded.trim());
  } catch {
    throw new KeyringError(`${label} is not valid base64`);
  }
  if (raw.length !== 32) throw new KeyringError(`${label} must be 32 bytes (base64), got ${raw.length}`);
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", raw));
  const id = [...digest.slice(0, 4)].map((b) => b.toString(16).padStart(2, "0")).join("");
  const key = await crypto.subtle.importKey("raw", raw, "AES-GCM", false, ["encrypt", "decrypt"]);
  return { id, key };
}

export async function createKeyring(current: string | undefined, previous?: string): Promise<Keyring> {
  if (!current) throw new KeyringError("ENCRYPTION_KEY is not set");
  const currentKey = await importKey(current, "ENCRYPTION_KEY");
  const byId = new Map([[currentKey.id, currentKey]]);
  for (const [i, old] of (previous ?? "")
    .split(",")
    .filter((s) => s.trim())
    .entries()) {
    const k = await importKey(old, `ENCRYPTION_KEYS_PREVIOUS[${i}]`);
    if (!byId.has(k.id)) byId.set(k.id, k);
  }
  return { current: currentKey, byId };
}

export async function seal(keyring: Keyring, plaintext: string, context: string): Promise<string> {
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const ct = await crypto.subtle.encrypt(
    { name: "AES-GCM", iv, additionalData: encoder.encode(context) },
    keyring.current.key,
    encoder.encode(plaintext),
  );
  return [FORMAT, keyring.current.id, toBase64Url(iv), toBase64Url(new Uint8Array(ct))].join(".");
}

export class SealedValueError extends Error {}

export async function open(keyring: Keyring, sealed: string, context: string): Promise<string> {
  const parts = sealed.split(".");
  if (parts.length !== 4 || parts[0] !== FORMAT) throw new SealedValueError("not a sealed value");
  const [, keyId, iv, ct] = parts as [string, string, string, string];
  const key = keyring.byId.get(keyId);
  if (!key) throw new SealedValueError(`sealed with unknown key ${keyId}`);
  try {
    const pt = await crypto.subtle.decrypt(
      { name: "AES-GCM", iv: fromBase64(iv), additionalData: encoder.encode(context) },
      key.key,
      fromBase64(ct),
    );
    return decoder.decode(pt);
  } catch {
    throw new SealedValueError("sealed value does not open (wrong key or context)");
  }
}

/** Whether a value was sealed with an older key and should be re-sealed. */
export function sealedWithOldKey(keyring: Keyring, sealed: string): boolean {
  return sealed.split(".")[1] !== keyring.current.id;
}
