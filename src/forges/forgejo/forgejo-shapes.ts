import { z } from "zod";

/**
 * Forgejo's runner API shapes and paths, as Edgerunner reads them (no I/O here: the contract test
 * runs these in Node against the fake Forgejo and Forgejo's API description).
 */

/** Which runners and jobs a scope sees: one repository, one organization, or the whole instance (admin). */
export type ForgejoScope =
  | { kind: "repository"; owner: string; repo: string }
  | { kind: "organization"; org: string }
  | { kind: "instance" };

/** An entity's scope at Forgejo: `enterprise` entities on a Forgejo endpoint mean the whole instance. */
export function forgejoScopeOf(entity: { kind: "repository" | "organization" | "enterprise"; owner: string; name: string }): ForgejoScope {
  if (entity.kind === "repository") return { kind: "repository", owner: entity.owner, repo: entity.name };
  if (entity.kind === "organization") return { kind: "organization", org: entity.owner };
  return { kind: "instance" };
}

const seg = encodeURIComponent;

/** The runners collection of a scope, relative to the API base (`…/api/v1`). */
export function runnersPath(scope: ForgejoScope): string {
  if (scope.kind === "repository") return `/repos/${seg(scope.owner)}/${seg(scope.repo)}/actions/runners`;
  if (scope.kind === "organization") return `/orgs/${seg(scope.org)}/actions/runners`;
  return "/admin/actions/runners";
}

/**
 * A job as `GET …/actions/runners/jobs` lists it. Forgejo lists jobs that are `waiting` (and, by
 * third-party reports, `running` ones too): only `waiting` ones want a runner. `handle` is the
 * attempt's own identifier: `forgejo-runner one-job --handle` takes exactly that job.
 */
export const forgejoJobSchema = z.object({
  id: z.number().int(),
  run_id: z.number().int().optional().default(0),
  attempt: z.number().int().optional().default(1),
  handle: z.string().min(1),
  repo_id: z.number().int().optional().default(0),
  owner_id: z.number().int().optional().default(0),
  name: z.string().optional().default(""),
  runs_on: z
    .array(z.string())
    .nullable()
    .optional()
    .transform((v) => v ?? []),
  task_id: z.number().int().optional().default(0),
  status: z.string(),
});
export type ForgejoJob = z.infer<typeof forgejoJobSchema>;

/** A runner as Forgejo lists it (`ActionRunner`); `status` is offline, idle or active. */
export const forgejoRunnerSchema = z.object({
  id: z.number().int(),
  uuid: z.string(),
  name: z.string(),
  status: z.string(),
  ephemeral: z.boolean().optional().default(false),
  labels: z
    .array(z.string())
    .nullable()
    .optional()
    .transform((v) => v ?? []),
});
export type ForgejoRunner = z.infer<typeof forgejoRunnerSchema>;

/** `POST …/actions/runners` answers 201 with the new runner's id and its credentials (uuid, token). */
export const registeredRunnerSchema = z.object({ id: z.number().int(), uuid: z.string().min(1), token: z.string().min(1) });
export type RegisteredRunner = z.infer<typeof registeredRunnerSchema>;
