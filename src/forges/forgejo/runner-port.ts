import type { ScaleSetRecord } from "../../db/scaleset/snapshot-store";
import type { Env } from "../../env";
import type { GithubRunnerInfo, RunnerPort } from "../../scaleset/ports";
import {
  deleteRunner,
  type ForgejoJob,
  type ForgejoRunner,
  forgejoScopeOf,
  getRunner,
  listRunners,
  listWaitingJobs,
  registerEphemeralRunner,
} from "./forgejo-api";
import { forgejoClient } from "./forgejo-client";

/**
 * Forgejo as the scale set object needs it, behind the same RunnerPort as GitHub. A Forgejo
 * runner's registration is its uuid and token (`POST …/actions/runners`): it takes the place of
 * GitHub's JIT config, sealed in `instances.jit_config_enc` before the create and served to the
 * machine by the metadata routes. Forgejo removes an ephemeral runner itself once its job is
 * done; one that never took a job is ours to delete.
 */

/** What is sealed for a Forgejo runner: its credentials. Secret: never logged, never returned by the API. */
export interface ForgejoRegistration {
  uuid: string;
  token: string;
}

export const encodeRegistration = (r: ForgejoRegistration): string => JSON.stringify({ uuid: r.uuid, token: r.token });

/** The registration a sealed value holds, or null when it is not one (a GitHub JIT config). */
export function decodeRegistration(text: string): ForgejoRegistration | null {
  try {
    const v = JSON.parse(text) as Partial<ForgejoRegistration>;
    return typeof v?.uuid === "string" && typeof v.token === "string" ? { uuid: v.uuid, token: v.token } : null;
  } catch {
    return null;
  }
}

/** A runner that is running a job is `active` at Forgejo: busy, as GitHub's `busy`. */
const runnerInfo = (r: ForgejoRunner): GithubRunnerInfo => ({ id: r.id, name: r.name, busy: r.status === "active" });

/** The waiting jobs of an entity's scope, for the poller. */
export interface ForgejoJobsPort {
  waitingJobs(): Promise<{ jobs: ForgejoJob[]; invalid: number }>;
  /** The ids of the scope's runners. */
  runnerIds(): Promise<Set<number>>;
}

export function forgejoJobsPort(env: Env, entity: ScaleSetRecord["entity"], outbound?: typeof fetch): ForgejoJobsPort {
  const client = forgejoClient(env, entity.credentialsId, outbound);
  const scope = forgejoScopeOf(entity);
  return {
    waitingJobs: () => listWaitingJobs(client, scope),
    runnerIds: async () => new Set((await listRunners(client, scope)).map((r) => r.id)),
  };
}

export function forgejoRunnerPort(env: Env, entity: ScaleSetRecord["entity"], outbound?: typeof fetch): RunnerPort {
  const client = forgejoClient(env, entity.credentialsId, outbound);
  const scope = forgejoScopeOf(entity);
  return {
    async createJitRunner({ name }) {
      // Labels are the runner's own (one-job --label): Forgejo's registration takes none.
      const r = await registerEphemeralRunner(client, scope, name);
      return { runnerId: r.id, encodedJitConfig: encodeRegistration(r) };
    },
    async removeRunner(runnerId) {
      const runner = await getRunner(client, scope, runnerId);
      if (!runner) return "gone";
      if (runner.status === "active") return "busy";
      return (await deleteRunner(client, scope, runnerId)) === "deleted" ? "removed" : "gone";
    },
    async listRunners() {
      return (await listRunners(client, scope)).map(runnerInfo);
    },
    async getRunner(runnerId) {
      const r = await getRunner(client, scope, runnerId);
      return r && runnerInfo(r);
    },
    async findRunnerByName(name) {
      const lower = name.toLowerCase();
      const r = (await listRunners(client, scope)).find((x) => x.name.toLowerCase() === lower);
      return r ? runnerInfo(r) : null;
    },
    // Forgejo has no runner download API: the install script downloads from the scale set's
    // runner_download_url or the documented default release (bootstrap/forgejo-linux-script.ts).
    runnerDownloads: async () => [],
    registrationToken: async () => {
      throw new Error("Forgejo runners are registered by Edgerunner (POST …/actions/runners), not with a registration token");
    },
    // Jobs are polled, not told by webhooks: there is no stale webhook state to re-check.
    jobStatus: async () => null,
  };
}
