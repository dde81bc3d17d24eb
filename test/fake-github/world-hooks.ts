/**
 * The world's hooks as GitHub delivers to them: which hooks hear an event about a repository
 * (the repository's own, its organization's, and an enterprise's when the organization belongs
 * to it: Seed.enterprise_orgs), the headers naming the hook and what it was made on, and the hook
 * a scoped configured delivery (PUT /_fake/webhook-delivery with `scope`) is.
 */
import { registryOf } from "./apps/registry.ts";
import type { FakeHook } from "./types.ts";
import type { World } from "./world.ts";

const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z");

/** Whether the hook's scope covers `repository` (`owner/name`, lower-cased). */
export function hookCovers(w: World, h: FakeHook, repository: string): boolean {
  const owner = repository.split("/")[0]!;
  const [kind, name] = h.scope.split("/", 2) as [string, string];
  if (kind === "repos") return h.scope === `repos/${repository}`;
  if (kind === "orgs") return name === owner;
  return kind === "enterprises" && (w.enterpriseOrgs.get(name)?.has(owner) ?? false);
}

/** The active hooks of the world subscribed to `event` that hear of `repository`. */
export function hooksHearing(w: World, repository: string, event: string): FakeHook[] {
  return [...w.hooks.values()].filter(
    (h) => h.active && (h.events.includes(event) || h.events.includes("*")) && hookCovers(w, h, repository),
  );
}

/**
 * The headers naming the hook: its id, and the kind and id of what it was made on (ids as the
 * fake's App pages give them: registry.ts idOf). `business` for an enterprise's hook is a guess:
 * GitHub's docs list no values for X-GitHub-Hook-Installation-Target-Type, and none of the
 * examples found shows an enterprise hook's.
 */
export function hookHeaders(w: World, h: FakeHook): Record<string, string> {
  const reg = registryOf(w);
  const [kind, ...rest] = h.scope.split("/");
  const name = rest.join("/");
  const [type, id] =
    kind === "repos"
      ? ["repository", reg.idOf(`repo:${name}`)]
      : kind === "orgs"
        ? ["organization", reg.idOf(`org:${name}`)]
        : ["business", reg.idOf(`enterprise:${name}`)];
  return {
    "x-github-hook-id": String(h.id),
    "x-github-hook-installation-target-type": type,
    "x-github-hook-installation-target-id": String(id),
  };
}

const SCOPE = /^(repos\/[^/]+\/[^/]+|orgs\/[^/]+|enterprises\/[^/]+)$/;

/** Why `scope` cannot carry a hook in this world, or null. */
export function scopeProblem(w: World, scope: string): string | null {
  if (!SCOPE.test(scope)) return "scope must be repos/<owner>/<repo>, orgs/<org> or enterprises/<enterprise>";
  const [kind, ...rest] = scope.split("/");
  const name = rest.join("/");
  const known = kind === "repos" ? w.repos.has(name) : kind === "orgs" ? w.orgs.has(name) : w.enterprises.has(name);
  return known ? null : `no ${scope} in this world: seed it first`;
}

/**
 * The hook a scoped configured delivery is: the one in `scope` with this URL (made active,
 * subscribed to workflow_job, with this secret), or a new one, as if made through REST.
 * `created` says which, so a later configuration can take away a hook it made.
 */
export function configuredHook(w: World, scope: string, url: string, secret: string): { hook: FakeHook; created: boolean } {
  const t = iso(w.now());
  const existing = [...w.hooks.values()].find((h) => h.scope === scope && h.config.url === url);
  if (existing) {
    existing.active = true;
    if (!existing.events.includes("workflow_job") && !existing.events.includes("*")) existing.events = [...existing.events, "workflow_job"];
    existing.config = { ...existing.config, secret };
    existing.updated_at = t;
    return { hook: existing, created: false };
  }
  const hook: FakeHook = {
    id: w.newId(),
    scope,
    name: "web",
    active: true,
    events: ["workflow_job"],
    config: { url, content_type: "json", insecure_ssl: "0", secret },
    created_at: t,
    updated_at: t,
  };
  w.hooks.set(hook.id, hook);
  return { hook, created: true };
}
