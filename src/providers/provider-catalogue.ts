import { keyringFor } from "../crypto/keyring";
import { open } from "../crypto/secret-box";
import { secretContext } from "../crypto/secret-contexts";
import type { ProviderRow } from "../db/providers/provider-store";
import type { Env } from "../env";
import { controllerId } from "../scaleset/ports-factory";
import { createShimClient } from "./shim-client";
import { SHIM_INTERFACE_VERSION_FLAVORS } from "./shim-protocol";

/**
 * Whether a provider can serve a shaped scale set: its shim offers a flavor catalogue (protocol
 * v1.2) and answers it for this pool. Asked when a shaped scale set is created or moved to the
 * provider, so one the shim cannot serve is refused then, with the reason, rather than leaving
 * its jobs waiting.
 */
export async function providerCatalogueProblem(
  env: Env,
  provider: Pick<ProviderRow, "id" | "name" | "url" | "secretEnc" | "timeoutSeconds">,
  pool: { id: string; extraSpecs: Record<string, unknown> },
  outbound?: typeof fetch,
): Promise<string | null> {
  const secret = await open(await keyringFor(env), provider.secretEnc, secretContext.provider(provider.id));
  const client = createShimClient(
    { name: provider.name, url: provider.url, secret },
    { controllerId: await controllerId(env), poolId: pool.id, extraSpecs: pool.extraSpecs },
    { timeoutMs: provider.timeoutSeconds * 1000, ...(outbound && { fetch: outbound }) },
  );
  const caps = await client.capabilities();
  if (!caps.ok)
    return `could not ask provider '${provider.name}' what it supports (${caps.error.message}); try again when its shim answers`;
  if (caps.value.flavors !== true)
    return `provider '${provider.name}' has no flavor catalogue (its shim speaks protocol ${caps.value.interface_version}; a shaped scale set needs ${SHIM_INTERFACE_VERSION_FLAVORS}'s GET /v1/flavors, docs/provider-shim-protocol.md)`;
  const catalogue = await client.flavors();
  if (!catalogue.ok) return `provider '${provider.name}' did not answer its flavor catalogue (${catalogue.error.message})`;
  if (!catalogue.value.flavors.length) return `provider '${provider.name}' lists no flavors for this scale set's extra specs`;
  return null;
}
