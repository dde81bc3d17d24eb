import { z } from "zod";
import { GithubApiError } from "../../github/errors";
import type { GithubClient } from "../../github/github-client";
import {
  type ForgejoJob,
  type ForgejoRunner,
  type ForgejoScope,
  forgejoJobSchema,
  forgejoRunnerSchema,
  type RegisteredRunner,
  registeredRunnerSchema,
  runnersPath,
} from "./forgejo-shapes";

export * from "./forgejo-shapes";

/**
 * The Forgejo REST calls Edgerunner makes (Forgejo 15 or later), with Forgejo's own shapes.
 * Checked against Forgejo's sources (docs/forges.md, "Forgejo", lists them): the integration
 * tests of the runner API (tests/integration/api_*_actions_runners_test.go), modules/structs
 * (RegisterRunnerOptions, RegisterRunnerResponse, ActionRunJob, ActionRunner) and the operations
 * of its Swagger description (test/fixtures/forgejo-swagger-runners.json, which the contract test
 * holds the fake to). Forgejo's REST API follows Gitea's conventions, which are GitHub's where it
 * matters here (JSON errors with a `message`, 404 for what is not there, 429 when throttled), so
 * the calls go through the same client as GitHub's (forgejo-client.ts).
 */

function parse<T>(operation: string, schema: z.ZodType<T>, data: unknown): T {
  const r = schema.safeParse(data);
  if (!r.success)
    throw new GithubApiError(operation, 200, `Forgejo answered an unexpected shape: ${r.error.issues[0]?.message ?? "invalid"}`);
  return r.data;
}

/**
 * The scope's jobs that wait for a runner. Jobs that fail validation are left out (and counted),
 * so one odd job cannot stop the others being served.
 */
export async function listWaitingJobs(client: GithubClient, scope: ForgejoScope): Promise<{ jobs: ForgejoJob[]; invalid: number }> {
  const res = await client.request<unknown>("forgejo_list_jobs", "GET", `${runnersPath(scope)}/jobs`);
  // Forgejo answers `null` for an empty list on some versions.
  const items = Array.isArray(res.data) ? res.data : [];
  const jobs: ForgejoJob[] = [];
  let invalid = 0;
  for (const item of items) {
    const r = forgejoJobSchema.safeParse(item);
    if (!r.success) invalid++;
    else if (r.data.status === "waiting") jobs.push(r.data);
  }
  return { jobs, invalid };
}

/** Registers an ephemeral runner: Forgejo removes it itself once its one job is done. */
export async function registerEphemeralRunner(client: GithubClient, scope: ForgejoScope, name: string): Promise<RegisteredRunner> {
  const res = await client.request<unknown>("forgejo_register_runner", "POST", runnersPath(scope), { body: { name, ephemeral: true } });
  return parse("forgejo_register_runner", registeredRunnerSchema, res.data);
}

/** Every runner of the scope (`page`/`limit` paging; `X-Total-Count` says how many). */
export async function listRunners(client: GithubClient, scope: ForgejoScope): Promise<ForgejoRunner[]> {
  const limit = 50;
  const all: ForgejoRunner[] = [];
  for (let page = 1; page <= 200; page++) {
    const res = await client.request<unknown>("forgejo_list_runners", "GET", runnersPath(scope), { query: { page, limit } });
    const items = parse("forgejo_list_runners", z.array(forgejoRunnerSchema).nullable(), res.data) ?? [];
    all.push(...items);
    const total = Number(res.headers.get("x-total-count") ?? Number.NaN);
    if (items.length < limit || (Number.isFinite(total) && all.length >= total)) break;
  }
  return all;
}

/** The runner under this id, or null (404: Forgejo removed it, or it never was). */
export async function getRunner(client: GithubClient, scope: ForgejoScope, id: number): Promise<ForgejoRunner | null> {
  const res = await client.request<unknown>("forgejo_get_runner", "GET", `${runnersPath(scope)}/${id}`, { allow: [404] });
  return res.status === 404 ? null : parse("forgejo_get_runner", forgejoRunnerSchema, res.data);
}

/** Deletes a runner; `gone` when Forgejo has none under this id (404). */
export async function deleteRunner(client: GithubClient, scope: ForgejoScope, id: number): Promise<"deleted" | "gone"> {
  const res = await client.request<unknown>("forgejo_delete_runner", "DELETE", `${runnersPath(scope)}/${id}`, { allow: [404] });
  return res.status === 404 ? "gone" : "deleted";
}
