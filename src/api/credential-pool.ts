import { z } from "@hono/zod-openapi";
import type { EntityKind } from "../db/directory/schema";
import type { FieldProblem } from "../http/errors";
import { ResourceName } from "../http/openapi";

/**
 * An entity's credential pool as the admin API takes and shows it: other credentials of the
 * entity's endpoint (more GitHub Apps installed on the same account, or PATs of other users)
 * that mint its runners' JIT configs beside its own credentials, each with its own GitHub
 * budget (docs/performance.md, "Credential pools"). The rules a requested pool must meet are a
 * plain function here; the routes look the names up and write the result.
 */

/** Ten credentials mint ~1,600 JIT configs a minute: more than a burst needs, and a pool stays readable. */
export const MAX_POOL_CREDENTIALS = 10;

const FIELD = "pool_credentials";

export const PoolCredentialsInput = z
  .array(ResourceName)
  .max(MAX_POOL_CREDENTIALS, `at most ${MAX_POOL_CREDENTIALS} credentials`)
  .superRefine((names, ctx) => {
    names.forEach((name, i) => {
      if (names.indexOf(name) !== i) ctx.addIssue({ code: "custom", path: [i], message: `'${name}' is listed twice` });
    });
  })
  .openapi({
    description:
      `Names of other credentials of the entity's endpoint that also mint its runners' JIT configs, each with its own GitHub budget (at most ${MAX_POOL_CREDENTIALS}). ` +
      "Not its own credentials_name. On update the list replaces the pool; [] empties it. See docs/performance.md, Credential pools",
    example: ["ci-app-2", "ci-app-3"],
  });

export const PoolMemberView = z
  .object({ id: z.uuid(), name: z.string() })
  .openapi("PoolCredential", { description: "A credential of the entity's pool" });

/** A credential a requested pool names, as the database has it. */
export interface PoolCandidate {
  id: string;
  name: string;
  endpointName: string;
}

/** The entity a pool is for: its kind (for messages), endpoint and own credentials. */
export interface PoolOwner {
  kind: EntityKind;
  endpointName: string;
  credentialsId: string;
}

/**
 * The members of a requested pool, in the order given, or why it cannot be (field
 * problems under `pool_credentials.<index>`): a name no credentials have, credentials of another
 * endpoint, or the entity's own credentials. Duplicates and the size are the schema's to refuse.
 */
export function resolvePool(
  names: readonly string[],
  found: readonly PoolCandidate[],
  owner: PoolOwner,
): { ok: true; members: { id: string; name: string }[] } | { ok: false; problems: FieldProblem[] } {
  const byName = new Map(found.map((c) => [c.name, c]));
  const problems: FieldProblem[] = [];
  const members: { id: string; name: string }[] = [];
  names.forEach((name, i) => {
    const path = `${FIELD}.${i}`;
    const c = byName.get(name);
    if (!c) problems.push({ path, message: `unknown credentials '${name}'` });
    else if (c.endpointName !== owner.endpointName) {
      problems.push({
        path,
        message: `credentials '${name}' are for endpoint '${c.endpointName}', this ${owner.kind} is on '${owner.endpointName}'`,
      });
    } else if (c.id === owner.credentialsId) {
      problems.push({ path, message: `'${name}' are this ${owner.kind}'s own credentials (credentials_name): a pool holds only others` });
    } else members.push({ id: c.id, name: c.name });
  });
  return problems.length ? { ok: false, problems } : { ok: true, members };
}
