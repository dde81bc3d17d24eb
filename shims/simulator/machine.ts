/**
 * A simulated runner machine: what a real machine does once it booted, the way GARM's install
 * script does it, against the coordinator and the fake GitHub. Used by the simulator shim for
 * its machines, and by the fake EC2's instances in the EC2 end-to-end scenario (which know only
 * what their user data says: the metadata URL and the instance token).
 *
 *   GET  {metadata-url}/runner-metadata (where to report, JIT or not) and the three JIT files
 *   POST {callback-url}/status installing …, /system-info, then connects to GitHub (the serverUrl
 *        in `.runner`) with the JIT identity, and reports idle with the agent id from `.runner`
 *   asks GitHub for a job until it gets one, runs it for `job_ms`, reports it done and exits
 *   (ephemeral: GitHub forgets the runner; the machine stays until it is deleted).
 */
import { runnerSession } from "../../test/fake-github/control-client.ts";
import { bootForgejoRunner } from "./forgejo-machine.ts";
import { jitteredBootDelay } from "./timeline.ts";

export interface SimulatorConfig {
  boot_delay_ms: number;
  /** Each machine's boot delay is drawn uniformly in boot_delay_ms × (1 ± boot_jitter) (0: exactly boot_delay_ms). */
  boot_jitter: number;
  job_ms: number;
  boot_failure_rate: number;
  poll_ms: number;
}

export type RunnerPhase = "booting" | "bootstrapping" | "idle" | "busy" | "done" | "failed" | "stopped";

export interface SimulatedRunner {
  tenant: string;
  name: string;
  provider_id: string;
  phase: RunnerPhase;
  agent_id: number | null;
  job_id: number | null;
  created_at: number;
  /** The scale set it was created for (absent where the cloud does not say, e.g. the EC2 scenario). */
  pool_id?: string;
  /** What its create asked for (absent where the cloud does not say); shape null: not a shaped scale set's machine. */
  flavor?: string;
  image?: string;
  shape?: { disk_gb: number | null; spot: boolean } | null;
  /** Its timeline (./timeline.ts): the boot delay it drew, when it first asked the coordinator, got its JIT files, reported idle, was deleted. */
  boot_delay_ms?: number;
  booted_at?: number;
  configured_at?: number;
  idle_at?: number;
  deleted_at?: number;
  /** GitHub as the runner knows it (serverUrl in `.runner`); for act_runner, the Gitea instance. */
  server_url: string | null;
  /** Set when the machine plays act_runner for a Gitea scale set. */
  forge?: "gitea";
  error?: string;
}

/** What a booting machine knows: from its BootstrapInstance, or read out of its user data. */
export interface MachineBoot {
  metadataUrl: string;
  token: string;
  /** Where to report; when absent, read from runner-metadata. */
  callbackUrl?: string;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** Statuses a Response may not carry a body with. */
const NULL_BODY = new Set([101, 204, 205, 304]);

/**
 * A machine's HTTP calls: retried like curl --retry while the coordinator is unreachable or 5xx.
 * Each waits up to 120 s for its answer, as curl waits without a timeout: a credentials fetch
 * may be held 90 s (JIT_WAIT_SECONDS) while the machine waits in line for its on-boot JIT config.
 * The body is read inside the retry: a coordinator restarted between the headers and the body
 * (e2e scenario B kills it) cuts the transfer, and that is a transient error too, not a machine
 * that failed to bootstrap.
 */
export async function machineFetch(url: string, init: RequestInit, alive: () => boolean): Promise<Response> {
  for (let attempt = 1; ; attempt++) {
    try {
      const res = await fetch(url, { ...init, signal: AbortSignal.timeout(120_000) });
      const body = await res.arrayBuffer();
      if (res.status < 500 || attempt >= 40 || !alive())
        return new Response(NULL_BODY.has(res.status) ? null : body, { status: res.status, headers: res.headers });
    } catch (err) {
      if (attempt >= 40 || !alive()) throw err;
    }
    await sleep(Math.min(250 * attempt, 2000));
  }
}

export async function bootRunner(
  r: SimulatedRunner,
  boot: MachineBoot,
  config: SimulatorConfig,
  log: (line: object) => void = () => {},
): Promise<void> {
  const alive = () => r.phase !== "stopped";
  const token = { authorization: `Bearer ${boot.token}` };
  let callbackUrl = boot.callbackUrl ?? null;
  const status = (s: string, message: string, extra: object = {}) =>
    machineFetch(
      `${callbackUrl}/status`,
      { method: "POST", headers: { ...token, "content-type": "application/json" }, body: JSON.stringify({ status: s, message, ...extra }) },
      alive,
    );
  const fail = async (message: string) => {
    r.phase = "failed";
    r.error = message;
    log({ event: "sim_runner_failed", instance: r.name, message });
    if (alive() && callbackUrl) await status("failed", message, r.agent_id ? { agent_id: r.agent_id } : {}).catch(() => {});
  };

  r.boot_delay_ms = jitteredBootDelay(config.boot_delay_ms, config.boot_jitter ?? 0);
  await sleep(r.boot_delay_ms);
  if (!alive()) return;
  r.phase = "bootstrapping";
  r.booted_at = Date.now();
  if (Math.random() < config.boot_failure_rate) return fail("simulated boot failure");
  const meta = await machineFetch(`${boot.metadataUrl}/runner-metadata`, { headers: token }, alive);
  if (!meta.ok) return fail(`runner-metadata: ${meta.status} ${await meta.text()}`);
  // What cloud-init would have been told, read back from the coordinator: where to report, JIT or not, which OS.
  const about = (await meta.json()) as {
    "callback-url": string;
    jit_config_enabled: boolean;
    os_type: string;
    forge?: string;
    forge_url?: string;
    labels?: string[];
  };
  callbackUrl ??= about["callback-url"];
  // A Forgejo scale set's machine plays forgejo-runner one-job instead (./forgejo-machine.ts).
  if (about.forge === "forgejo")
    return bootForgejoRunner(
      r,
      { metadataUrl: boot.metadataUrl, callbackUrl, token: boot.token, labels: about.labels ?? [], status, fail },
      config,
      log,
    );
  await status("installing", "downloading runner");
  if (about.forge === "gitea" && about.forge_url) {
    // A Gitea scale set's machine plays act_runner instead (./act-runner.ts).
    const { bootActRunner } = await import("./act-runner.ts");
    return bootActRunner(r, boot, config, { instanceUrl: about.forge_url, labels: about.labels ?? [], callbackUrl, status, fail }, log);
  }
  if (!about.jit_config_enabled) return fail("the simulator runs JIT runners only");
  const files: Record<string, string> = {};
  for (const f of ["runner", "credentials", "credentials_rsaparams"]) {
    const res = await machineFetch(`${boot.metadataUrl}/credentials/${f}`, { headers: token }, alive);
    if (!res.ok) return fail(`credentials/${f}: ${res.status} ${await res.text()}`);
    files[f] = await res.text();
  }
  r.configured_at = Date.now();
  const dotRunner = JSON.parse(files.runner!) as { agentId: number; agentName: string; serverUrl?: string };
  const creds = JSON.parse(files.credentials!) as { data: { clientId: string } };
  if (!dotRunner.serverUrl) return fail(".runner has no serverUrl");
  r.agent_id = dotRunner.agentId;
  r.server_url = dotRunner.serverUrl;
  await status("installing", "configuring runner", { agent_id: r.agent_id });
  await machineFetch(
    `${callbackUrl}/system-info`,
    {
      method: "POST",
      headers: { ...token, "content-type": "application/json" },
      body: JSON.stringify({ os_name: "ubuntu", os_version: "24.04", agent_id: r.agent_id }),
    },
    alive,
  );
  const gh = runnerSession(dotRunner.serverUrl);
  const online = await gh.connect({
    agent_id: dotRunner.agentId,
    name: dotRunner.agentName,
    client_id: creds.data.clientId,
    os: about.os_type,
  });
  if (online.status !== 200) return fail(`GitHub refused the runner: ${online.status} ${JSON.stringify(online.body)}`);
  const idle = await status("idle", "runner successfully installed", { agent_id: r.agent_id });
  if (!idle.ok) log({ event: "sim_idle_refused", instance: r.name, status: idle.status, body: await idle.text() });
  if (!alive()) return;
  r.phase = "idle";
  r.idle_at = Date.now();
  log({ event: "sim_runner_idle", instance: r.name, agent_id: r.agent_id });

  while (alive()) {
    const got = await gh.acquire(r.agent_id).catch(() => ({ status: 0, body: null }));
    if (got.status === 200) {
      const job = got.body as { id: number };
      r.phase = "busy";
      r.job_id = job.id;
      log({ event: "sim_job_started", instance: r.name, job_id: job.id });
      await sleep(config.job_ms);
      // A runner that lost its machine mid-job never reports; GitHub would time the job out.
      if (!alive()) return;
      await gh.complete(r.agent_id, job.id);
      r.phase = "done";
      log({ event: "sim_job_done", instance: r.name, job_id: job.id });
      return; // ephemeral: the runner process exits, the machine idles until deleted
    }
    if (got.status === 404) {
      // GitHub no longer knows this runner (the coordinator removed it): the runner exits.
      r.phase = "done";
      return;
    }
    await sleep(config.poll_ms);
  }
}

/** The machine is gone: its runner stops, and if it was online GitHub sees it go offline. */
export function stopRunner(r: SimulatedRunner): void {
  // Gitea marks a runner that stops polling offline by itself: only the fake GitHub is told.
  const lostRunner = (r.phase === "idle" || r.phase === "busy") && r.agent_id !== null && r.server_url && r.forge !== "gitea";
  r.phase = "stopped";
  if (lostRunner)
    void runnerSession(r.server_url!)
      .disconnect(r.agent_id!)
      .catch(() => {});
}
