import type { EntityKind } from "../db/directory/schema";

/** How an entity is named on GitHub: `owner/repo`, `org`, or the enterprise slug. */
export const entityFullName = (e: { kind: EntityKind; owner: string; name: string }) =>
  e.kind === "repository" ? `${e.owner}/${e.name}` : e.owner;

/** The key deliveries and links find an entity by (`repository:owner/name`, `organization:org`, `enterprise:slug`); GitHub names are case-insensitive. */
export const entityLookupKey = (kind: EntityKind, owner: string, name = "") =>
  `${kind}:${kind === "repository" ? `${owner}/${name}` : owner}`.toLowerCase();
