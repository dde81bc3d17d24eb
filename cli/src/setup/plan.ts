/**
 * What `edgerunner setup` decides, as plain functions over what wrangler and the coordinator
 * said: which account, whether the database exists, which secrets to generate, which URL is the
 * coordinator's, whether the provider needs registering. run-setup.ts carries the decisions out.
 */
import type { Account, Database, Whoami } from "./wrangler-output.ts";

/** A decision that stops setup before it changes anything: what is wrong and what to do. */
export interface Refusal {
  message: string;
  hint: string;
}

export type LoginCheck = { ok: true; account: Account | undefined } | ({ ok: false } & Refusal);

/** Logged in, and to exactly one account (or the one named with --account-id). */
export function checkLogin(whoami: Whoami | undefined, accountId: string | undefined): LoginCheck {
  if (!whoami) {
    return { ok: false, message: "`wrangler whoami --json` did not answer as expected", hint: "run `npx wrangler whoami` to see why" };
  }
  if (!whoami.loggedIn) {
    return {
      ok: false,
      message: "not logged in to Cloudflare",
      hint: "run `npx wrangler login` (or set CLOUDFLARE_API_TOKEN), then run `npx edgerunner setup` again",
    };
  }
  const list = whoami.accounts.map((a) => `  ${a.id}  ${a.name}`).join("\n");
  if (accountId) {
    const account = whoami.accounts.find((a) => a.id === accountId);
    // An API token may not be allowed to list accounts: then trust the id given.
    if (!account && whoami.accounts.length > 0) {
      return { ok: false, message: `account ${accountId} is not one this login can use`, hint: `accounts:\n${list}` };
    }
    return { ok: true, account: account ?? { id: accountId, name: "" } };
  }
  if (whoami.accounts.length > 1) {
    return {
      ok: false,
      message: "this login can use several Cloudflare accounts",
      hint: `give the one to deploy to with --account-id ID (or set CLOUDFLARE_ACCOUNT_ID):\n${list}`,
    };
  }
  return { ok: true, account: whoami.accounts[0] };
}

export type DatabasePlan = { kind: "reuse"; id: string } | { kind: "create" };

/** D1 names are unique in an account: an existing database with the name is the one to use. */
export function planDatabase(databases: Database[], name: string): DatabasePlan {
  const found = databases.find((d) => d.name === name);
  return found ? { kind: "reuse", id: found.uuid } : { kind: "create" };
}

/** How a generated secret is made: `key` is base64 of 32 random bytes (ENCRYPTION_KEY's format), `token` the same in base64url. */
export type SecretKind = "token" | "key";

export const COORDINATOR_SECRETS: { name: string; kind: SecretKind }[] = [
  { name: "ADMIN_TOKEN", kind: "token" },
  { name: "ENCRYPTION_KEY", kind: "key" },
  { name: "INSTANCE_TOKEN_SECRET", kind: "key" },
  { name: "METRICS_TOKEN", kind: "token" },
];

/** The wanted secrets the Worker does not have yet, in the order wanted: existing ones are kept. */
export const missingSecrets = (existing: string[], wanted: string[]) => wanted.filter((n) => !existing.includes(n));

const isWorkersDev = (url: string) => /^https:\/\/[^/]+\.workers\.dev$/.test(url);

/**
 * The PUBLIC_URL to deploy with first: --public-url, else the one an earlier setup wrote, else
 * none yet (the committed placeholder goes out, and the deploy tells the workers.dev URL).
 */
export function initialPublicUrl(flag: string | undefined, stored: string | undefined): string | undefined {
  return flag ?? stored;
}

/**
 * A URL the user chose, which the deploy's workers.dev URL never replaces: --public-url, or
 * one an earlier run was given (any URL that is not a workers.dev one was given, not learned).
 */
export function chosenPublicUrl(flag: string | undefined, stored: string | undefined): string | undefined {
  return flag ?? (stored && !isWorkersDev(stored) ? stored : undefined);
}

export type AfterDeploy = { kind: "done"; url: string } | { kind: "redeploy"; url: string } | ({ kind: "refuse" } & Refusal);

/**
 * After a deploy: a URL the user chose stands (chosenPublicUrl); otherwise the workers.dev URL wrangler
 * reported is the coordinator's, and a deploy made with another PUBLIC_URL (the first, or a
 * Worker renamed) is done once more with it.
 */
export function afterDeploy(chosen: string | undefined, deployedWith: string | undefined, workersDev: string | undefined): AfterDeploy {
  if (chosen) return { kind: "done", url: chosen };
  if (workersDev) return workersDev === deployedWith ? { kind: "done", url: workersDev } : { kind: "redeploy", url: workersDev };
  if (deployedWith) return { kind: "done", url: deployedWith };
  return {
    kind: "refuse",
    message: "the deploy reported no workers.dev URL, so the coordinator's public URL is unknown",
    hint: "give it with --public-url https://… (the route or custom domain the Worker answers on), then run setup again",
  };
}

export interface ProviderView {
  url: string;
}

export type ProviderPlan =
  | { kind: "create"; secret: string }
  | { kind: "update"; body: { url?: string; secret?: string } }
  | { kind: "move" }
  | { kind: "unchanged" };

/**
 * Whether the shim gets a new signing secret: when it has none, and when the coordinator has no
 * provider for it, since a secret that exists only at the shim cannot be read back to register.
 */
export const needsNewShimSecret = (shimHasSecret: boolean, providerExists: boolean) => !shimHasSecret || !providerExists;

/**
 * What to do with the provider, given what the coordinator has (undefined: none by that name),
 * the shim's URL, and the shim's signing secret if this run generated it (always, when there is
 * no provider: needsNewShimSecret). A provider at another URL is `move`d: the coordinator takes
 * a new URL only together with a new secret while scale sets use it (409 in_use otherwise), so
 * the shim gets a new secret first and both go in one update (plan again with it).
 */
export function planProvider(existing: ProviderView | undefined, shimUrl: string, newSecret: string | undefined): ProviderPlan {
  if (!existing) {
    if (!newSecret) throw new Error("a provider is registered with the secret this run generated");
    return { kind: "create", secret: newSecret };
  }
  if (existing.url !== shimUrl && !newSecret) return { kind: "move" };
  const body = { ...(existing.url !== shimUrl ? { url: shimUrl } : {}), ...(newSecret ? { secret: newSecret } : {}) };
  return Object.keys(body).length ? { kind: "update", body } : { kind: "unchanged" };
}

/** Where the admin token for a later run comes from: this run, EDGERUNNER_TOKEN, or a profile for this URL. */
export function adminTokenFor(
  created: string | undefined,
  env: NodeJS.ProcessEnv,
  profiles: Record<string, { url?: string; token?: string }>,
  url: string,
): string | undefined {
  if (created) return created;
  if (env.EDGERUNNER_TOKEN) return env.EDGERUNNER_TOKEN;
  const same = (u: string | undefined) => u !== undefined && u.replace(/\/+$/, "") === url.replace(/\/+$/, "");
  return Object.values(profiles).find((p) => same(p.url) && p.token)?.token;
}
