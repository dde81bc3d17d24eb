/**
 * A burst's credential pool (bench:workflows --credentials N): the repository's own credential
 * plus N − 1 more, each a PAT of its own at the fake GitHub (a login of its own, so its requests
 * are told apart, and a secondary-limit budget of its own: the fake keys its limits by the
 * token), registered at the coordinator on the same endpoint and set as the repository's
 * `pool_credentials` (PUT /api/v1/repositories/{id}; the list replaces the pool).
 *
 * With N = 1 on a repository whose pool was never set, nothing is called: the bench runs on a
 * coordinator without pools. A coordinator that refuses the pool gets a PoolUnavailable, which
 * the burst reports as skipped rather than failing the whole run.
 */
import type { Coordinator } from "./harness.mjs";
import type { HarnessWorld } from "./harness-world.mjs";

export class PoolUnavailable extends Error {}

/** The extra credentials' PATs at the fake GitHub (the world's own is ghp_bench, login bench). */
const extraPat = (k: number) => ({ token: `ghp_bench_pool_${k}`, login: `bench-pool-${k}` });

export interface CredentialPool {
  /** Makes the repository's pool `credentials` credentials (its own included); the logins its requests carry at the fake. */
  use(credentials: number): Promise<string[]>;
}

export function credentialPool(
  coordinator: Coordinator,
  w: HarnessWorld,
  seedPats: (pats: { token: string; login: string }[]) => Promise<void>,
): CredentialPool {
  const registered: string[] = [];
  let poolSet = false;

  async function register(upTo: number) {
    for (let k = registered.length + 2; k <= upTo; k++) {
      const pat = extraPat(k);
      await seedPats([pat]);
      const name = `${w.credentials}-${k}`;
      await coordinator.api("POST", "/github/credentials", {
        name,
        endpoint: w.endpoint,
        auth_type: "pat",
        pat: { oauth2_token: pat.token },
      });
      registered.push(name);
    }
  }

  return {
    async use(credentials) {
      const logins = ["bench", ...Array.from({ length: credentials - 1 }, (_, i) => extraPat(i + 2).login)];
      if (credentials === 1 && !poolSet) return logins;
      await register(credentials);
      const names = registered.slice(0, credentials - 1);
      try {
        await coordinator.api("PUT", `/repositories/${w.repo.id}`, { pool_credentials: names });
      } catch (err) {
        throw new PoolUnavailable(
          `the coordinator did not take a credential pool (${err instanceof Error ? err.message : String(err)}): ` +
            "it needs the pool_credentials admin API (issue 26); run with --credentials 1",
        );
      }
      poolSet = true;
      const shown = (await coordinator.api("GET", `/repositories/${w.repo.id}`)) as { pool_credentials?: { name: string }[] };
      const pooled = (shown.pool_credentials ?? []).map((c) => c.name).sort();
      if (String(pooled) !== String([...names].sort()))
        throw new PoolUnavailable(`the repository shows pool_credentials ${JSON.stringify(pooled)}, not ${JSON.stringify(names)}`);
      return logins;
    },
  };
}
