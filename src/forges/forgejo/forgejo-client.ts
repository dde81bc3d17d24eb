import { clientPool } from "../../github/client-pool";
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

/** The Forgejo client of a credential; `outbound`: the object's connection limiter, when it has one. */
export const forgejoClient = clientPool(
  // No GitHub budget: Forgejo's limits are the instance's own, answered with 429 when reached.
  (env, credentialId, outbound) =>
    new GithubClient({ env, credentialId, maxWaitMs: 10_000, budget: null, fetch: forgejoFetch(outbound ?? measuredFetch) }),
);
