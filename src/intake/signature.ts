import { verify } from "@octokit/webhooks-methods";
import type { Keyring } from "../crypto/secret-box";
import { open } from "../crypto/secret-box";
import { secretContext } from "../crypto/secret-contexts";
import { errorText, logError } from "../observability/log";

/** `X-Hub-Signature-256`: HMAC-SHA256 of the raw body, hex. */
export const SIGNATURE_FORMAT = /^sha256=[0-9a-f]{64}$/i;

// Opening a sealed secret is an AES-GCM decryption; an isolate keeps what it opened (entities'
// and Apps' webhook secrets alike), keyed by where it lives and the sealed value itself, so a
// changed secret is opened afresh and an old one is never used.
const MAX_OPENED = 1024;
const opened = new Map<string, Promise<string>>();

function openWebhookSecret(keyring: Keyring, context: string, sealed: string): Promise<string> {
  const key = `${context}|${sealed}`;
  let secret = opened.get(key);
  if (!secret) {
    secret = open(keyring, sealed, context);
    secret.catch(() => opened.delete(key));
    if (opened.size >= MAX_OPENED) opened.delete(opened.keys().next().value!);
    opened.set(key, secret);
  }
  return secret;
}

export interface SigningCandidate {
  id: string;
  webhookSecretEnc: string;
}

/**
 * Every candidate whose webhook secret produced `signature` over `body`, in the order given
 * (callers pass the most specific first). All of them, not the first: which entities signed
 * decides which scale sets the delivery may reach. A secret that no longer opens (rotated
 * key) counts as not matching rather than failing the delivery. `sealedIn` says where a
 * candidate's secret is stored (an entity's, unless told otherwise).
 */
export async function findSigners<C extends SigningCandidate>(
  keyring: Keyring,
  candidates: readonly C[],
  body: string,
  signature: string,
  sealedIn: (c: C) => string = (c) => secretContext.webhookSecret(c.id),
): Promise<C[]> {
  if (!SIGNATURE_FORMAT.test(signature) || body.length === 0) return [];
  const signers: C[] = [];
  for (const c of candidates) {
    let secret: string;
    try {
      secret = await openWebhookSecret(keyring, sealedIn(c), c.webhookSecretEnc);
    } catch (err) {
      logError({ event: "webhook_secret_unreadable", secret_of: sealedIn(c), error: errorText(err) });
      continue;
    }
    if (await verify(secret, body, signature.toLowerCase())) signers.push(c);
  }
  return signers;
}
