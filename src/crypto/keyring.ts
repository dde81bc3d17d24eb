import type { Env } from "../env";
import { createKeyring, type Keyring } from "./secret-box";

// Importing keys costs a few WebCrypto calls; an isolate reuses the keyring while the secrets stay the same.
let cached: { source: string; keyring: Promise<Keyring> } | undefined;

export function keyringFor(env: Pick<Env, "ENCRYPTION_KEY" | "ENCRYPTION_KEYS_PREVIOUS">): Promise<Keyring> {
  const source = `${env.ENCRYPTION_KEY ?? ""}|${env.ENCRYPTION_KEYS_PREVIOUS ?? ""}`;
  if (cached?.source !== source) {
    const keyring = createKeyring(env.ENCRYPTION_KEY, env.ENCRYPTION_KEYS_PREVIOUS);
    keyring.catch(() => {
      if (cached?.keyring === keyring) cached = undefined;
    });
    cached = { source, keyring };
  }
  return cached.keyring;
}
