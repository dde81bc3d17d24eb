/**
 * A simulated machine of a Forgejo scale set: what the forgejo-runner bootstrap script
 * (src/bootstrap/forgejo-linux-script.ts) and `forgejo-runner one-job` do, against the
 * coordinator and the fake Forgejo (test/fake-forgejo).
 *
 *   GET  {metadata-url}/forgejo/runner-env and /forgejo/runner-token (uuid, handle, Forgejo's URL; the token)
 *   POST {Forgejo}/api/actions/runner.v1.RunnerService/Declare, then FetchTask with its handle until
 *        the job is its own, runs it for `job_ms`, UpdateTask with the result
 *   POST {callback-url}/status installing …, idle (runner up); nothing after (the token serves the bootstrap only)
 */
import { machineFetch, type SimulatedRunner, type SimulatorConfig } from "./machine.ts";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The runner-env file's shell assignments (single-quoted by the coordinator). */
export function parseRunnerEnv(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split("\n")) {
    const m = /^([A-Z_]+)=(.*)$/.exec(line.trim());
    if (!m) continue;
    const v = m[2]!;
    out[m[1]!] = v.startsWith("'") ? v.slice(1, -1).replaceAll(`'"'"'`, "'") : v;
  }
  return out;
}

export async function bootForgejoRunner(
  r: SimulatedRunner,
  io: {
    metadataUrl: string;
    callbackUrl: string;
    token: string;
    labels: string[];
    status: (s: string, message: string, extra?: object) => Promise<Response>;
    fail: (message: string) => Promise<void>;
  },
  config: SimulatorConfig,
  log: (line: object) => void,
): Promise<void> {
  const alive = () => r.phase !== "stopped";
  const auth = { authorization: `Bearer ${io.token}` };
  await io.status("installing", "downloading forgejo-runner");
  const envRes = await machineFetch(`${io.metadataUrl}/forgejo/runner-env`, { headers: auth }, alive);
  if (!envRes.ok) return io.fail(`forgejo/runner-env: ${envRes.status} ${await envRes.text()}`);
  const vars = parseRunnerEnv(await envRes.text());
  const tokenRes = await machineFetch(`${io.metadataUrl}/forgejo/runner-token`, { headers: auth }, alive);
  if (!tokenRes.ok) return io.fail(`forgejo/runner-token: ${tokenRes.status} ${await tokenRes.text()}`);
  const runnerToken = await tokenRes.text();
  r.configured_at = Date.now();
  r.agent_id = vars.RUNNER_ID && vars.RUNNER_ID !== "null" ? Number(vars.RUNNER_ID) : null;
  const forgejo = (vars.FORGEJO_URL ?? "").replace(/\/+$/, "");
  r.server_url = forgejo;
  const rpc = async (method: string, body: object) => {
    const res = await machineFetch(
      `${forgejo}/api/actions/runner.v1.RunnerService/${method}`,
      {
        method: "POST",
        headers: { "content-type": "application/json", "x-runner-uuid": vars.RUNNER_UUID ?? "", "x-runner-token": runnerToken },
        body: JSON.stringify(body),
      },
      alive,
    );
    return {
      status: res.status,
      body: (await res.json().catch(() => null)) as { task?: { id: number; context?: { job_id?: number } } } | null,
    };
  };
  const declared = await rpc("Declare", { version: "12.10.2", labels: io.labels });
  if (declared.status !== 200) return io.fail(`Forgejo refused the runner: ${declared.status} ${JSON.stringify(declared.body)}`);
  await io.status("idle", "forgejo-runner waiting for its job", r.agent_id === null ? {} : { agent_id: r.agent_id });
  if (!alive()) return;
  r.phase = "idle";
  r.idle_at = Date.now();
  log({ event: "sim_runner_idle", instance: r.name, agent_id: r.agent_id, forge: "forgejo" });

  // one-job --wait: ask for the job of its handle until it comes.
  while (alive()) {
    const got = await rpc("FetchTask", { tasksVersion: 0, handle: vars.JOB_HANDLE }).catch(() => ({ status: 0, body: null }));
    if (got.status === 401) {
      // Forgejo no longer knows the runner (deleted, never used): one-job exits.
      r.phase = "done";
      return;
    }
    const task = got.body?.task;
    if (task) {
      r.phase = "busy";
      r.job_id = task.context?.job_id ?? null;
      log({ event: "sim_job_started", instance: r.name, job_id: r.job_id, forge: "forgejo" });
      await sleep(config.job_ms);
      if (!alive()) return;
      await rpc("UpdateTask", { state: { id: task.id, result: "RESULT_SUCCESS" } });
      r.phase = "done";
      log({ event: "sim_job_done", instance: r.name, job_id: r.job_id, forge: "forgejo" });
      return;
    }
    await sleep(config.poll_ms);
  }
}
