import { keyringFor } from "../crypto/keyring";
import { open } from "../crypto/secret-box";
import { secretContext } from "../crypto/secret-contexts";
import { type ScaleSetRecord, scaleSetEntity } from "../db/scaleset/snapshot-store";
import type { Env } from "../env";
import { forgejoRunnerPort } from "../forges/forgejo/runner-port";
import { giteaRunnerPort } from "../forges/gitea/runner-port";
import { ActionsServiceClient } from "../github/actions-service/client";
import { clientPool } from "../github/client-pool";
import { GithubClient } from "../github/github-client";
import {
  createRegistrationToken,
  deleteRunner,
  findRunnerByName,
  type GithubRunner,
  generateJitConfig,
  getJob,
  getRunner,
  listRunnerDownloads,
  listRunners,
} from "../github/runners";
import { scopeOf } from "../github/scope";
import { createShimClient } from "../providers/shim-client";
import type { ActionsServicePort } from "./listener/actions-port";
import type { GithubRunnerInfo, MachinePort, RunnerPort, RunnerTool } from "./ports";

// One client per credential per isolate, and per connection limiter (github/client-pool.ts).
// A rate-limit window longer than 10 s ends the call; the object backs off and comes back.
const clientFor = clientPool(
  (env, credentialId, outbound) => new GithubClient({ env, credentialId, maxWaitMs: 10_000, ...(outbound && { fetch: outbound }) }),
);
// Runner downloads change rarely; their temporary download tokens live about an hour.
const DOWNLOADS_MEMO_MS = 5 * 60_000;
const downloads = new Map<string, { at: number; tools: Promise<RunnerTool[]> }>();

const runnerInfo = (r: GithubRunner): GithubRunnerInfo => ({ id: r.id, name: r.name, busy: r.busy });

/**
 * GitHub's runner scale set API (the Actions service) for a scale set's entity; `outbound` as for
 * githubRunnerPort: both its own calls and the REST call behind its admin token go through it.
 */
export function actionsServicePort(env: Env, entity: ScaleSetRecord["entity"], outbound?: typeof fetch): ActionsServicePort {
  return new ActionsServiceClient({
    gh: clientFor(env, entity.credentialsId, outbound),
    scope: scopeOf(entity),
    ...(outbound && { fetch: outbound }),
  });
}

/**
 * A runner port whose JIT runners come from a runner scale set's own generatejitconfig
 * (scaleset_api intake); everything else is the REST port's.
 */
export function scaleSetApiRunnerPort(rest: RunnerPort, actions: ActionsServicePort, githubScaleSetId: number | null): RunnerPort {
  return {
    ...rest,
    async createJitRunner({ name }) {
      if (githubScaleSetId === null) throw new Error("the runner scale set is not registered at GitHub yet");
      const r = await actions.generateJitConfig(githubScaleSetId, name);
      if (!r.ok) throw new Error(`generatejitconfig: ${r.error.kind}: ${r.error.message}`);
      return r.value;
    },
  };
}

/**
 * GitHub, as the scale set object needs it: JIT runners in, registrations out. `outbound`: the
 * fetch every call goes through (the object's connection limiter), when it has one.
 */
export function githubRunnerPort(env: Env, entity: ScaleSetRecord["entity"], outbound?: typeof fetch): RunnerPort {
  // The entity's forge picks the API: Gitea's and Forgejo's runners are their own (src/forges/).
  if (entity.forge === "forgejo") return forgejoRunnerPort(env, entity, outbound);
  const gh = clientFor(env, entity.credentialsId, outbound);
  if (entity.forge === "gitea") return giteaRunnerPort(gh, entity);
  const scope = scopeOf(entity);
  const memoKey = `${entity.credentialsId}:${entity.kind}:${entity.owner}/${entity.name}`;
  return {
    async createJitRunner({ name, labels, runnerGroup, sendBy }) {
      const jit = await generateJitConfig(gh, scope, { name, labels, runnerGroup, ...(sendBy !== undefined && { sendBy }) });
      return { runnerId: jit.runner.id, encodedJitConfig: jit.encodedJitConfig };
    },
    async removeRunner(runnerId) {
      const r = await deleteRunner(gh, scope, runnerId);
      return r.outcome === "deleted" ? "removed" : r.outcome === "already_gone" ? "gone" : "busy";
    },
    async listRunners() {
      return (await listRunners(gh, scope)).map(runnerInfo);
    },
    async getRunner(runnerId) {
      const r = await getRunner(gh, scope, runnerId);
      return r && runnerInfo(r);
    },
    async findRunnerByName(name) {
      const r = await findRunnerByName(gh, scope, name);
      return r && runnerInfo(r);
    },
    runnerDownloads() {
      const memo = downloads.get(memoKey);
      if (memo && Date.now() - memo.at < DOWNLOADS_MEMO_MS) return memo.tools;
      const tools = listRunnerDownloads(gh, scope);
      downloads.set(memoKey, { at: Date.now(), tools });
      tools.catch(() => downloads.delete(memoKey));
      return tools;
    },
    registrationToken: async () => (await createRegistrationToken(gh, scope)).token,
    async jobStatus(repository, jobId) {
      const [owner, repo] = repository.split("/");
      return getJob(gh, { owner: owner!, repo: repo! }, jobId);
    },
  };
}

/**
 * GitHub for one instance's runner: through the credential of the entity's pool that minted it
 * (`jitCredentialsId`), falling back to the entity's own when that one fails (taken out of the
 * pool and deleted, or refused by GitHub): any credential that may manage the entity's runners
 * may remove this one.
 */
export function instanceRunnerPort(
  env: Env,
  ss: ScaleSetRecord,
  own: RunnerPort,
  jitCredentialsId: string | null,
  outbound?: typeof fetch,
): RunnerPort {
  if (!jitCredentialsId || jitCredentialsId === ss.entity.credentialsId) return own;
  const bound = githubRunnerPort(env, { ...ss.entity, credentialsId: jitCredentialsId }, outbound);
  const either =
    <A extends unknown[], R>(call: (port: RunnerPort) => (...args: A) => Promise<R>) =>
    async (...args: A): Promise<R> => {
      try {
        return await call(bound)(...args);
      } catch {
        return await call(own)(...args);
      }
    };
  return {
    ...own,
    removeRunner: either((p) => p.removeRunner),
    getRunner: either((p) => p.getRunner),
    findRunnerByName: either((p) => p.findRunnerByName),
  };
}

/**
 * This coordinator's id on the shim protocol (GARM's controller id): a UUID derived from its
 * public URL, so it stays the same across deploys and isolates without any stored state.
 */
export async function controllerId(env: Pick<Env, "PUBLIC_URL">): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(`edgerunner:${env.PUBLIC_URL ?? ""}`)));
  const hex = [...digest.slice(0, 16)].map((b) => b.toString(16).padStart(2, "0")).join("");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-5${hex.slice(13, 16)}-${((parseInt(hex[16]!, 16) & 3) | 8).toString(16)}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

/**
 * The shim and GitHub adapters for one scale set, with its provider's secret opened. `outbound`
 * as for githubRunnerPort; in scaleset_api intake, runners come from the runner scale set
 * (`githubScaleSetId`, once registered).
 */
export async function openScaleSetPorts(
  env: Env,
  ss: ScaleSetRecord,
  opts: { outbound?: typeof fetch; githubScaleSetId?: number | null } = {},
): Promise<{ machines: MachinePort; runners: RunnerPort }> {
  const { outbound, githubScaleSetId = null } = opts;
  const providerSecret = await open(await keyringFor(env), ss.provider.secretEnc, secretContext.provider(ss.provider.id));
  const machines = createShimClient(
    { name: ss.provider.name, url: ss.provider.url, secret: providerSecret },
    { controllerId: await controllerId(env), poolId: ss.id, extraSpecs: ss.extraSpecs },
    { timeoutMs: ss.provider.timeoutSeconds * 1000, ...(outbound && { fetch: outbound }) },
  );
  const rest = githubRunnerPort(env, ss.entity, outbound);
  const runners =
    ss.intake === "scaleset_api" ? scaleSetApiRunnerPort(rest, actionsServicePort(env, ss.entity, outbound), githubScaleSetId) : rest;
  return { machines, runners };
}

/** GitHub, as a scale set's instances need it (the metadata routes), or null if the scale set is gone. */
export async function runnerPortForScaleSet(env: Env, scaleSetId: string): Promise<RunnerPort | null> {
  const entity = await scaleSetEntity(env.DB, scaleSetId);
  return entity && githubRunnerPort(env, entity);
}
