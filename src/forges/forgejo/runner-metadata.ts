import { defaultForgejoRunnerUrl, forgejoLinuxInstallScript, forgejoRunnerEnv } from "../../bootstrap/forgejo-linux-script";
import { keyringFor } from "../../crypto/keyring";
import { open } from "../../crypto/secret-box";
import { secretContext } from "../../crypto/secret-contexts";
import { instanceJobHandle } from "../../db/jobs/forgejo-job-store";
import type { RunnerSetup } from "../../db/scaleset/runner-setup-store";
import type { Env } from "../../env";
import { decodeRegistration } from "./runner-port";

/**
 * What a Forgejo runner's machine fetches from the metadata routes (routes/metadata.ts), each
 * behind its instance token: its install script, its environment (uuid, job handle, Forgejo's
 * URL, runner id) and its runner token. Answers are plain values or a refusal with its status.
 */
export type MetadataAnswer = { ok: true; body: string } | { ok: false; status: 404 | 409; message: string };

/** The install script, or why there is none (Linux only; an architecture without a default release needs runner_download_url). */
export function forgejoInstallScript(
  setup: RunnerSetup,
  input: { instanceName: string; metadataUrl: string; callbackUrl: string; token: string; runAsUser: string },
): MetadataAnswer {
  if (setup.osType !== "linux") return { ok: false, status: 409, message: "forgejo-runner bootstraps on Linux only" };
  const url = setup.runnerDownloadUrl ?? defaultForgejoRunnerUrl(setup.osArch);
  if (!url)
    return {
      ok: false,
      status: 409,
      message: `no default forgejo-runner release for ${setup.osArch}: set the scale set's runner_download_url`,
    };
  return {
    ok: true,
    body: forgejoLinuxInstallScript({
      ...input,
      downloadUrl: url,
      downloadSha256: setup.runnerDownloadSha256 ?? "",
      labels: setup.labels,
    }),
  };
}

async function registration(env: Env, instanceId: string, sealed: string | null | undefined) {
  if (!sealed) return null;
  return decodeRegistration(await open(await keyringFor(env), sealed, secretContext.jitConfig(instanceId)));
}

/** `forgejo/runner-env`: the runner's uuid, its job's handle, Forgejo's web URL and the runner id, as shell assignments. */
export async function forgejoRunnerEnvFile(
  env: Env,
  inst: { id: string; agentId: number | null; jitConfigEnc?: string | null },
  setup: RunnerSetup,
): Promise<MetadataAnswer> {
  const reg = await registration(env, inst.id, inst.jitConfigEnc);
  if (!reg) return { ok: false, status: 404, message: "this runner has no Forgejo registration" };
  const handle = await instanceJobHandle(env.DB, inst.id);
  if (!handle) return { ok: false, status: 409, message: "the job this runner was made for left the queue; it has nothing to run" };
  return { ok: true, body: forgejoRunnerEnv({ uuid: reg.uuid, handle, forgejoUrl: setup.baseUrl, runnerId: inst.agentId }) };
}

/** `forgejo/runner-token`: the runner's token (secret), the file `one-job --token-url file:…` reads. */
export async function forgejoRunnerToken(env: Env, inst: { id: string; jitConfigEnc?: string | null }): Promise<MetadataAnswer> {
  const reg = await registration(env, inst.id, inst.jitConfigEnc);
  return reg ? { ok: true, body: reg.token } : { ok: false, status: 404, message: "this runner has no Forgejo registration" };
}
