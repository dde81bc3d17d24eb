/**
 * Commands take what people know (a credentials name, `owner/repo`, a scale set name) as well
 * as ids: a name is looked up in the list it belongs to. No match or an ambiguous name is a
 * not-found API failure (exit 1), as if the API had answered it.
 */
import type { ApiClient } from "./client.ts";
import { unwrap } from "./client.ts";
import { ApiFailure } from "./errors.ts";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const isUuid = (s: string) => UUID.test(s);

export type EntityKind = "repository" | "organization" | "enterprise";
export const ENTITY_PATH = { repository: "repositories", organization: "organizations", enterprise: "enterprises" } as const;

function pickOne<T extends { id: string }>(matches: T[], what: string, ref: string, label: (t: T) => string): string {
  if (matches.length === 1) return matches[0]!.id;
  if (matches.length === 0) throw new ApiFailure(404, { error: `no ${what} "${ref}"`, code: "not_found", details: null });
  throw new ApiFailure(409, {
    error: `${matches.length} ${what}s match "${ref}": use an id`,
    code: "conflict",
    details: matches.map((m) => ({ id: m.id, name: label(m) })),
  });
}

export async function credentialsId(api: ApiClient, ref: string): Promise<string> {
  if (isUuid(ref)) return ref;
  const all = await unwrap(api.GET("/api/v1/github/credentials"));
  return pickOne(
    all.filter((c) => c.name === ref),
    "credentials named",
    ref,
    (c) => c.name,
  );
}

/** A repository as `owner/name` (or an id); an organization or enterprise by name (or an id). */
export async function entityId(api: ApiClient, kind: EntityKind, ref: string): Promise<string> {
  if (isUuid(ref)) return ref;
  if (kind === "repository") {
    const [owner, name, ...rest] = ref.split("/");
    const all = await unwrap(api.GET("/api/v1/repositories"));
    const matches =
      rest.length === 0 && name
        ? all.filter((r) => r.owner.toLowerCase() === owner!.toLowerCase() && r.name.toLowerCase() === name.toLowerCase())
        : [];
    return pickOne(matches, "repository", ref, (r) => `${r.owner}/${r.name}`);
  }
  const all = kind === "organization" ? await unwrap(api.GET("/api/v1/organizations")) : await unwrap(api.GET("/api/v1/enterprises"));
  return pickOne(
    all.filter((e) => e.name.toLowerCase() === ref.toLowerCase()),
    kind,
    ref,
    (e) => e.name,
  );
}

/** A scale set by id, or by name when exactly one has it (names are unique per entity only). */
export async function scaleSetId(api: ApiClient, ref: string): Promise<string> {
  if (isUuid(ref)) return ref;
  const all = await unwrap(api.GET("/api/v1/scalesets"));
  return pickOne(
    all.filter((s) => s.name === ref),
    "scale set named",
    ref,
    (s) => `${s.entity.kind} ${s.entity.name}: ${s.name}`,
  );
}

/** A live (not revoked) API token by name, or any by id. */
export async function tokenId(api: ApiClient, ref: string): Promise<string> {
  if (isUuid(ref)) return ref;
  const all = await unwrap(api.GET("/api/v1/tokens"));
  return pickOne(
    all.filter((t) => t.name === ref && t.revoked_at === null),
    "live API token named",
    ref,
    (t) => t.name,
  );
}
