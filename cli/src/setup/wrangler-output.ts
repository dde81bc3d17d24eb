/**
 * What wrangler prints, read into plain data. The shapes are wrangler 4's (the version in
 * package.json): `whoami --json`, `d1 list --json`, `secret list --format json`, and the
 * ND-JSON file it writes to WRANGLER_OUTPUT_FILE_PATH (a `deploy` entry with the URLs deployed
 * to). Pure, and tested against the fake wrangler that prints the same (test/fixtures/fake-wrangler).
 */

export interface Account {
  id: string;
  name: string;
}

export interface Whoami {
  loggedIn: boolean;
  accounts: Account[];
  email?: string;
}

export interface Database {
  uuid: string;
  name: string;
}

/** The JSON document in a command's stdout (wrangler may print a warning line before it). */
function jsonIn(stdout: string): unknown {
  const text = stdout.trim();
  try {
    return JSON.parse(text);
  } catch {
    const start = text.search(/[[{]/);
    if (start < 0) return undefined;
    try {
      return JSON.parse(text.slice(start));
    } catch {
      return undefined;
    }
  }
}

/** `wrangler whoami --json`: `{"loggedIn":false}` (and exit 1) when no one is logged in. */
export function parseWhoami(stdout: string): Whoami | undefined {
  const data = jsonIn(stdout) as { loggedIn?: unknown; accounts?: unknown; email?: unknown } | undefined;
  if (!data || typeof data !== "object" || typeof data.loggedIn !== "boolean") return undefined;
  const accounts = Array.isArray(data.accounts)
    ? data.accounts.filter((a): a is Account => typeof a?.id === "string").map((a) => ({ id: a.id, name: String(a.name ?? "") }))
    : [];
  return { loggedIn: data.loggedIn, accounts, ...(typeof data.email === "string" ? { email: data.email } : {}) };
}

/** `wrangler d1 list --json`: every database of the account. */
export function parseD1List(stdout: string): Database[] | undefined {
  const data = jsonIn(stdout);
  if (!Array.isArray(data)) return undefined;
  return data.filter((d) => typeof d?.uuid === "string" && typeof d?.name === "string").map((d) => ({ uuid: d.uuid, name: d.name }));
}

/** `wrangler secret list --format json`: the names of a Worker's secrets (never their values). */
export function parseSecretList(stdout: string): string[] | undefined {
  const data = jsonIn(stdout);
  if (!Array.isArray(data)) return undefined;
  return data.filter((s) => typeof s?.name === "string").map((s) => s.name as string);
}

/** Wrangler's answer for a Worker that was never deployed (`secret list` on a first run). */
export const isWorkerNotFound = (output: string) => /Worker "[^"]*"(?: \(env: [^)]*\))? not found/.test(output);

/** The URLs a `wrangler deploy` deployed to, from its output file (`targets` of the `deploy` entry). */
export function deployTargets(ndjson: string): string[] {
  const targets: string[] = [];
  for (const line of ndjson.split("\n")) {
    if (!line.trim()) continue;
    try {
      const entry = JSON.parse(line) as { type?: string; targets?: unknown };
      if (entry.type === "deploy" && Array.isArray(entry.targets)) targets.push(...entry.targets.filter((t) => typeof t === "string"));
    } catch {
      // A line wrangler did not finish writing says nothing about where it deployed.
    }
  }
  return targets;
}

/** The workers.dev URL among a deploy's targets (routes and cron schedules are the others). */
export const workersDevUrl = (targets: string[]) => targets.find((t) => /^https:\/\/[^/\s]+\.workers\.dev$/.test(t));

/** How many migrations `d1 migrations apply` applied (0 when it said there were none). */
export function migrationsApplied(stdout: string): number {
  if (/No migrations to apply/.test(stdout)) return 0;
  return new Set(stdout.match(/\b\d{4}_[\w-]+\.sql\b/g) ?? []).size;
}
