/**
 * A simulated machine of a Gitea scale set playing act_runner (test/fake-gitea speaks the other
 * side): the registration token from the coordinator's metadata route, then Gitea's runner.v1
 * Connect service as act_runner calls it (Register ephemeral, Declare, FetchTask until a job,
 * UpdateTask with its result), with the status reports GARM's install script makes.
 */
import type { MachineBoot, SimulatedRunner, SimulatorConfig } from "./machine.ts";
import { machineFetch } from "./machine.ts";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface ActRunnerContext {
  /** The Gitea instance's web URL (runner-metadata's forge_url). */
  instanceUrl: string;
  labels: string[];
  callbackUrl: string;
  status: (s: string, message: string, extra?: object) => Promise<Response>;
  fail: (message: string) => Promise<void>;
}

export async function bootActRunner(
  r: SimulatedRunner,
  boot: MachineBoot,
  config: SimulatorConfig,
  ctx: ActRunnerContext,
  log: (line: object) => void,
): Promise<void> {
  const alive = () => r.phase !== "stopped";
  r.forge = "gitea";
  const token = { authorization: `Bearer ${boot.token}` };
  const rpc = (method: string, body: unknown, runner?: { uuid: string; token: string }) =>
    machineFetch(
      `${ctx.instanceUrl.replace(/\/+$/, "")}/api/actions/runner.v1.RunnerService/${method}`,
      {
        method: "POST",
        headers: {
          "content-type": "application/json",
          "connect-protocol-version": "1",
          ...(runner && { "x-runner-uuid": runner.uuid, "x-runner-token": runner.token }),
        },
        body: JSON.stringify(body),
      },
      alive,
    );

  await ctx.status("installing", "fetching registration token");
  const reg = await machineFetch(`${boot.metadataUrl}/runner-registration-token/`, { headers: token }, alive);
  if (!reg.ok) return ctx.fail(`runner-registration-token: ${reg.status} ${await reg.text()}`);
  const registrationToken = await reg.text();
  const registered = await rpc("Register", {
    name: r.name,
    token: registrationToken,
    labels: ctx.labels,
    ephemeral: true,
    version: "simulated",
  });
  if (!registered.ok) return ctx.fail(`act_runner register: ${registered.status} ${await registered.text()}`);
  const { runner } = (await registered.json()) as { runner: { id: number; uuid: string; token: string } };
  r.configured_at = Date.now();
  r.agent_id = runner.id;
  r.server_url = ctx.instanceUrl;
  await rpc("Declare", { version: "simulated", labels: ctx.labels }, runner);
  await machineFetch(
    `${ctx.callbackUrl}/system-info`,
    {
      method: "POST",
      headers: { ...token, "content-type": "application/json" },
      body: JSON.stringify({ os_name: "ubuntu", os_version: "24.04", agent_id: runner.id }),
    },
    alive,
  );
  const idle = await ctx.status("idle", "act_runner registered and started", { agent_id: runner.id });
  if (!idle.ok) log({ event: "sim_idle_refused", instance: r.name, status: idle.status, body: await idle.text() });
  if (!alive()) return;
  r.phase = "idle";
  r.idle_at = Date.now();
  log({ event: "sim_runner_idle", instance: r.name, agent_id: runner.id, forge: "gitea" });

  while (alive()) {
    const got = await rpc("FetchTask", { tasksVersion: "0" }, runner).catch(() => null);
    if (got?.status === 401) {
      // Gitea no longer knows this runner (the coordinator removed it): act_runner exits.
      r.phase = "done";
      return;
    }
    const task = got?.ok ? ((await got.json()) as { task?: { id: number } }).task : undefined;
    if (task) {
      r.phase = "busy";
      r.job_id = task.id;
      log({ event: "sim_job_started", instance: r.name, job_id: task.id });
      await sleep(config.job_ms);
      if (!alive()) return;
      await rpc("UpdateTask", { state: { id: task.id, result: "RESULT_SUCCESS", stoppedAt: new Date().toISOString() } }, runner);
      r.phase = "done";
      log({ event: "sim_job_done", instance: r.name, job_id: task.id });
      return; // daemon --once: act_runner exits after its job
    }
    await sleep(config.poll_ms);
  }
}
