import type { Keyring } from "../crypto/secret-box";
import { open } from "../crypto/secret-box";
import { secretContext } from "../crypto/secret-contexts";
import { errorText, logError } from "../observability/log";

/** `X-Hub-Signature-256`: HMAC-SHA256 of the raw body, hex. */
export const SIGNATURE_FORMAT = /^sha256=[0-9a-f]{64}$/i;

// Opening a sealed secret is an AES-GCM decryption and turning it into an HMAC key a WebCrypto
// import; an isolate keeps the key it made (entities' and Apps' webhook secrets alike), keyed by
// where the secret lives and the sealed value itself, so a changed secret is opened afresh and
// an old one is never used. A burst of deliveries then costs one HMAC each, as it must.
const MAX_OPENED = 1024;
const opened = new Map<string, Promise<CryptoKey>>();

function webhookKey(keyring: Keyring, context: string, sealed: string): Promise<CryptoKey> {
  const key = `${context}|${sealed}`;
  let hmac = opened.get(key);
  if (!hmac) {
    hmac = open(keyring, sealed, context).then((secret) =>
      crypto.subtle.importKey("raw", new TextEncoder().encode(secret), { name: "HMAC", hash: "SHA-256" }, false, ["verify"]),
    );
    hmac.catch(() => opened.delete(key));
    if (opened.size >= MAX_OPENED) opened.delete(opened.keys().next().value!);
    opened.set(key, hmac);
  }
  return hmac;
}

function hexBytes(hex: string): Uint8Array {
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = Number.parseInt(hex.slice(i * 2, i * 2 + 2), 16);
  return out;
}

export interface SigningCandidate {
  id: string;
  webhookSecretEnc: string;
}

/**
 * Every candidate whose webhook secret produced `signature` over `body`, in the order given
 * (callers pass the most specific first). All of them, not the first: which entities signed
 * decides which scale sets the delivery may reach. A secret that no longer opens (rotated
 * key) counts as not matching rather than failing the delivery. `body` is the raw body, the
 * bytes GitHub signed; `sealedIn` says where a candidate's secret is stored (an entity's,
 * unless told otherwise).
 */
export async function findSigners<C extends SigningCandidate>(
  keyring: Keyring,
  candidates: readonly C[],
  body: Uint8Array,
  signature: string,
  sealedIn: (c: C) => string = (c) => secretContext.webhookSecret(c.id),
): Promise<C[]> {
  if (!SIGNATURE_FORMAT.test(signature) || body.length === 0) return [];
  const mac = hexBytes(signature.slice("sha256=".length));
  const signers: C[] = [];
  for (const c of candidates) {
    let key: CryptoKey;
    try {
      key = await webhookKey(keyring, sealedIn(c), c.webhookSecretEnc);
    } catch (err) {
      logError({ event: "webhook_secret_unreadable", secret_of: sealedIn(c), error: errorText(err) });
      continue;
    }
    // WebCrypto's verify compares in constant time.
    if (await crypto.subtle.verify("HMAC", key, mac, body)) signers.push(c);
  }
  return signers;
}
