import { z } from "zod";

/**
 * Where a GitHub App of ours is installed, and what that offers: the installation's organization
 * and repositories, as entities the user may add with one click. Plain data and rules; the
 * webhook intake and the first-run page keep the record (src/db/github/github-app-store.ts).
 */

export type AccountType = "User" | "Organization" | "Enterprise";

export interface InstallationRecord {
  installationId: number;
  accountLogin: string;
  accountType: AccountType;
  repositorySelection: "all" | "selected";
  /** `owner/name`, sorted. */
  repositories: string[];
  status: "active" | "suspended" | "deleted";
}

const Account = z.object({ login: z.string().min(1).max(100), type: z.enum(["User", "Organization", "Enterprise"]) });
const Repo = z.object({ full_name: z.string().min(3).max(201) });

/** The parts of GitHub's `installation` and `installation_repositories` payloads we use. */
export const InstallationPayload = z.object({
  action: z.string(),
  installation: z.object({
    id: z.int().positive(),
    app_id: z.int().positive(),
    account: Account,
    repository_selection: z.enum(["all", "selected"]),
  }),
  repositories: z.array(Repo).max(10_000).optional(),
  repositories_added: z.array(Repo).max(10_000).optional(),
  repositories_removed: z.array(Repo).max(10_000).optional(),
});
export type InstallationPayload = z.infer<typeof InstallationPayload>;

const sorted = (names: Iterable<string>) => [...new Set(names)].sort();

/**
 * The record after one delivery. `created` lists the repositories of a `selected` installation
 * (GitHub's payload lists them for `all` too, as far as it does); `added`/`removed` change the
 * list; `deleted`, `suspend` and `unsuspend` change the status. Null: nothing to record (an
 * action we do not follow, such as `new_permissions_accepted`, with no record yet).
 */
export function applyInstallationEvent(
  current: InstallationRecord | null,
  event: string,
  p: InstallationPayload,
): InstallationRecord | null {
  const base: InstallationRecord = current ?? {
    installationId: p.installation.id,
    accountLogin: p.installation.account.login,
    accountType: p.installation.account.type,
    repositorySelection: p.installation.repository_selection,
    repositories: [],
    status: "active",
  };
  const next: InstallationRecord = { ...base, repositorySelection: p.installation.repository_selection };
  if (event === "installation") {
    if (p.action === "created") return { ...next, status: "active", repositories: sorted((p.repositories ?? []).map((r) => r.full_name)) };
    if (p.action === "deleted") return { ...next, status: "deleted" };
    if (p.action === "suspend") return { ...next, status: "suspended" };
    if (p.action === "unsuspend") return { ...next, status: "active" };
    return current ? next : null;
  }
  if (event === "installation_repositories") {
    const removed = new Set((p.repositories_removed ?? []).map((r) => r.full_name));
    const kept = base.repositories.filter((r) => !removed.has(r));
    return { ...next, repositories: sorted([...kept, ...(p.repositories_added ?? []).map((r) => r.full_name)]) };
  }
  return null;
}

/** An entity already registered, as the offers compare it. */
export interface KnownEntity {
  kind: "repository" | "organization" | "enterprise";
  /** The repository's or organization's owner login; the enterprise's slug. */
  owner: string;
  /** The repository's name; empty otherwise. */
  name: string;
}

export interface InstallationOffers {
  /** The installation's organization as an entity (runners for all its repositories), when it is one. */
  organization: { login: string; added: boolean } | null;
  repositories: { fullName: string; added: boolean }[];
}

const lower = (s: string) => s.toLowerCase();

/** What the installation offers to add, and which of it is registered already (GitHub logins are case-insensitive). */
export function installationOffers(inst: InstallationRecord, known: readonly KnownEntity[]): InstallationOffers {
  const orgs = new Set(known.filter((e) => e.kind === "organization").map((e) => lower(e.owner)));
  const repos = new Set(known.filter((e) => e.kind === "repository").map((e) => lower(`${e.owner}/${e.name}`)));
  return {
    organization: inst.accountType === "Organization" ? { login: inst.accountLogin, added: orgs.has(lower(inst.accountLogin)) } : null,
    repositories: inst.repositories.map((fullName) => ({ fullName, added: repos.has(lower(fullName)) })),
  };
}

/**
 * The name of the credentials made for an installation: `<app slug>-<account>`, trimmed to a
 * resource name (64 characters, letters, digits, `.`, `_`, `-`), and numbered when taken.
 */
export function installationCredentialsName(slug: string, account: string, taken: ReadonlySet<string>): string {
  const clean = `${slug}-${account}`.replace(/[^A-Za-z0-9._-]+/g, "-").replace(/^[^A-Za-z0-9]+/, "");
  const stem = (clean || "github-app").slice(0, 60);
  if (!taken.has(stem)) return stem;
  for (let i = 2; ; i++) {
    const candidate = `${stem}-${i}`;
    if (!taken.has(candidate)) return candidate;
  }
}
