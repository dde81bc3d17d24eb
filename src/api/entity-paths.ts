import type { EntityKind } from "../db/directory/schema";

/**
 * Where each kind of entity lives in the admin API: /repositories, /organizations and
 * /enterprises, with the tag its routes are listed under. The entity, webhook and scale set
 * routes all hang off these paths.
 */
export interface EntityPath {
  kind: EntityKind;
  /** The collection's path segment, as in /api/v1/repositories. */
  path: string;
  title: string;
}

export const entityPaths = [
  { kind: "repository", path: "repositories", title: "Repositories" },
  { kind: "organization", path: "organizations", title: "Organizations" },
  { kind: "enterprise", path: "enterprises", title: "Enterprises" },
] as const satisfies readonly EntityPath[];
