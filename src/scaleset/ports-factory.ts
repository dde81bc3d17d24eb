import type { ScaleSetRecord } from "../db/scaleset-store";
import type { Env } from "../env";
import { GithubClient } from "../github/github-client";
import { deleteRunner, generateJitConfig, listRunnerDownloads, listRunners } from "../github/runners";
import { scopeOf } from "../github/scope";
import type { MachinePort, RunnerPort, RunnerTool } from "./ports";

/** GitHub, as the scale set object needs it: JIT runners in, registrations out. */
export function githubRunnerPort(env: Env, entity: ScaleSetRecord["entity"]): RunnerPort {
  // A rate-limit window longer than this ends the call; the object backs off and comes back.
  const gh = new GithubClient({ env, credentialId: entity.credentialsId, maxWaitMs: 10_000 });
  const scope = scopeOf(entity);
  return {
    async createJitRunner({ name, labels, runnerGroup }) {
      const jit = await generateJitConfig(gh, scope, { name, labels, runnerGroup });
      return { runnerId: jit.runner.id, encodedJitConfig: jit.encodedJitConfig };
    },
    async removeRunner(runnerId) {
      const r = await deleteRunner(gh, scope, runnerId);
      return r.outcome === "deleted" ? "removed" : r.outcome === "already_gone" ? "gone" : "busy";
    },
    async listRunners() {
      return (await listRunners(gh, scope)).map((r) => ({ id: r.id, name: r.name, busy: r.busy }));
    },
    runnerDownloads: () => listRunnerDownloads(gh, scope),
  };
}

/** Builds the shim and GitHub adapters for one scale set. */
export function createScaleSetPorts(env: Env, ss: ScaleSetRecord, providerSecret: string): { machines: MachinePort; runners: RunnerPort } {
  void providerSecret;
  throw new Error("machine port is wired when the shim client lands");
}

/** GitHub's runner downloads for a scale set's entity (cached by the GitHub client). */
export async function runnerToolsForScaleSet(env: Env, scaleSetId: string): Promise<RunnerTool[]> {
  const e = await env.DB.prepare(
    `SELECT e.id, e.kind, e.owner, e.name, e.endpoint_name, e.credentials_id FROM scale_sets s JOIN entities e ON e.id = s.entity_id WHERE s.id = ?`,
  )
    .bind(scaleSetId)
    .first<Record<string, any>>();
  if (!e) return [];
  return githubRunnerPort(env, {
    id: e.id,
    kind: e.kind,
    owner: e.owner,
    name: e.name,
    endpointName: e.endpoint_name,
    credentialsId: e.credentials_id,
  }).runnerDownloads();
}
