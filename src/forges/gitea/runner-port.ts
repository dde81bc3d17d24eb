import type { GithubClient } from "../../github/github-client";
import type { GithubRunnerInfo, RunnerPort } from "../../scaleset/ports";
import {
  createGiteaRegistrationToken,
  deleteGiteaRunner,
  type GiteaRunner,
  getGiteaJob,
  getGiteaRunner,
  listGiteaRunners,
} from "./gitea-runners";
import { type GiteaScope, giteaScopeOf } from "./gitea-scope";

/** Thrown if anything asks Gitea for a just-in-time runner: the API refuses JIT on Gitea scale sets, so it is a bug. */
export class GiteaHasNoJitError extends Error {
  override name = "GiteaHasNoJitError";
  constructor() {
    super("Gitea has no just-in-time runner configs: a Gitea scale set registers act_runner with a registration token");
  }
}

const info = (r: GiteaRunner): GithubRunnerInfo => ({ id: r.id, name: r.name, busy: r.busy });

/**
 * Gitea, as the scale set object needs it (the same port as GitHub's): registration tokens,
 * runners listed, found and removed, a job's status for the stale-job re-check. `gh` is the
 * entity's credential's client (ports-factory.ts makes it, with the object's outbound limiter).
 */
export function giteaRunnerPort(
  gh: GithubClient,
  entity: { kind: "repository" | "organization" | "enterprise"; owner: string; name: string },
): RunnerPort {
  const scope: GiteaScope = giteaScopeOf(entity);
  return {
    async createJitRunner() {
      throw new GiteaHasNoJitError();
    },
    async removeRunner(runnerId) {
      return (await deleteGiteaRunner(gh, scope, runnerId)) === "deleted" ? "removed" : "gone";
    },
    async listRunners() {
      return (await listGiteaRunners(gh, scope)).map(info);
    },
    async getRunner(runnerId) {
      const r = await getGiteaRunner(gh, scope, runnerId);
      return r && info(r);
    },
    async findRunnerByName(name) {
      // Gitea's list has no name filter: the scope's runners are few (ephemeral ones go after their job).
      const wanted = name.toLowerCase();
      const r = (await listGiteaRunners(gh, scope)).find((x) => x.name.toLowerCase() === wanted);
      return r ? info(r) : null;
    },
    // Gitea publishes no runner-download API: machines use the scale set's runner_download_url or the documented release.
    runnerDownloads: async () => [],
    registrationToken: () => createGiteaRegistrationToken(gh, scope),
    async jobStatus(repository, jobId) {
      const [owner, repo] = repository.split("/");
      return getGiteaJob(gh, { owner: owner!, repo: repo! }, jobId);
    },
  };
}
