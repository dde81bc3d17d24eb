import type { Env } from "../../env";
import { GithubClient } from "../../github/github-client";
import { measuredFetch } from "../../lib/invocation-cost";

/**
 * The HTTP client for a Forgejo endpoint's token. Forgejo's REST API keeps the conventions the
 * GitHub client already handles (JSON errors, 404, 429 with `Retry-After`, 5xx), so a Forgejo
 * call goes through the same client: the credential stays bound to the API URL it was stored
 * for (github/credential-binding.ts), a refused token marks the credential failing, throttling
 * waits or ends the call with GithubRateLimitedError, 5xx retries, and errors are the same
 * classes. Only the request differs: Forgejo documents `Authorization: token <token>` for its
 * access tokens, and the GitHub-only headers are left off.
 */
export function forgejoFetch(inner: typeof fetch): typeof fetch {
  return (input, init) => {
    const headers = new Headers(init?.headers);
    const auth = headers.get("authorization");
    if (auth?.startsWith("Bearer ")) headers.set("authorization", `token ${auth.slice("Bearer ".length)}`);
    headers.set("accept", "application/json");
    headers.delete("x-github-api-version");
    return inner(input, { ...init, headers });
  };
}

// One client per credential per isolate (as for GitHub): it keeps the credential in memory.
const clients = new Map<string, GithubClient>();
const limitedClients = new WeakMap<typeof fetch, Map<string, GithubClient>>();

/** The Forgejo client of a credential; `outbound`: the object's connection limiter, when it has one. */
export function forgejoClient(env: Env, credentialId: string, outbound?: typeof fetch): GithubClient {
  let pool = clients;
  if (outbound) {
    pool = limitedClients.get(outbound) ?? new Map();
    limitedClients.set(outbound, pool);
  }
  let client = pool.get(credentialId);
  if (!client) {
    // No GitHub budget: Forgejo's limits are the instance's own, answered with 429 when reached.
    client = new GithubClient({ env, credentialId, maxWaitMs: 10_000, budget: null, fetch: forgejoFetch(outbound ?? measuredFetch) });
    pool.set(credentialId, client);
  }
  return client;
}
