import type { Env } from "../env";
import type { GithubClient } from "./github-client";

/**
 * One client per credential per isolate, and a separate set per connection limiter (a scale set
 * object that limits its outbound calls gets clients whose calls go through its limiter): a client
 * keeps its credential, token and cached state in memory, so a pass does not pay D1 reads and
 * token work on the way to the forge. `make` builds a missing one.
 */
export function clientPool(
  make: (env: Env, credentialId: string, outbound?: typeof fetch) => GithubClient,
): (env: Env, credentialId: string, outbound?: typeof fetch) => GithubClient {
  const clients = new Map<string, GithubClient>();
  const limited = new WeakMap<typeof fetch, Map<string, GithubClient>>();
  return (env, credentialId, outbound) => {
    let pool = clients;
    if (outbound) {
      pool = limited.get(outbound) ?? new Map();
      limited.set(outbound, pool);
    }
    let client = pool.get(credentialId);
    if (!client) {
      client = make(env, credentialId, outbound);
      pool.set(credentialId, client);
    }
    return client;
  };
}
