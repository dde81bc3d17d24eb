/**
 * The simulator shim: provider shim protocol v1 (the fake shim's server, tenants and fault rules)
 * whose machines are simulated runners. Each machine the coordinator creates boots after a delay
 * and then behaves like a real runner with a JIT config:
 *
 *   GET  {metadata-url}/runner-metadata and the three JIT files, with the instance token
 *   POST {callback-url}/status installing …, /system-info, then connects to GitHub (the serverUrl
 *        in `.runner`) with the JIT identity, and reports idle with the agent id from `.runner`
 *   asks GitHub for a job until it gets one, runs it for `job_ms`, reports it done and exits
 *   (ephemeral: GitHub forgets the runner; the machine stays until the coordinator deletes it).
 *
 * A machine deleted before its runner finished stops at once (its runner goes offline).
 * Knobs (PUT /_control/simulator): boot_delay_ms, job_ms, boot_failure_rate (the machine reports
 * `failed`), poll_ms. Create/delete error rates, latency and hangs are the fake shim's fault rules
 * with `probability` (PUT /_control/tenants/{t}/faults).
 */
import { runnerSession } from "../../test/fake-github/control-client.ts";
import { startFakeShim, type FakeMachine, type FakeShim } from "../../test/fake-shim/server.ts";
import type { BootstrapInstance } from "../../src/providers/shim-protocol.ts";

export interface SimulatorConfig {
  boot_delay_ms: number;
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
  /** GitHub as the runner knows it (serverUrl in `.runner`). */
  server_url: string | null;
  error?: string;
}

export interface Simulator extends FakeShim {
  config: SimulatorConfig;
  runners: Map<string, SimulatedRunner>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A machine's HTTP calls: retried like curl --retry while the coordinator is unreachable or 5xx. */
async function call(url: string, init: RequestInit, alive: () => boolean): Promise<Response> {
  for (let attempt = 1; ; attempt++) {
    try {
      const res = await fetch(url, { ...init, signal: AbortSignal.timeout(10_000) });
      if (res.status < 500 || attempt >= 40 || !alive()) return res;
      await res.arrayBuffer();
    } catch (err) {
      if (attempt >= 40 || !alive()) throw err;
    }
    await sleep(Math.min(250 * attempt, 2000));
  }
}

export async function startSimulator(opts: { port?: number; config?: Partial<SimulatorConfig>; log?: (line: object) => void } = {}): Promise<Simulator> {
  const config: SimulatorConfig = { boot_delay_ms: 100, job_ms: 500, boot_failure_rate: 0, poll_ms: 50, ...opts.config };
  const runners = new Map<string, SimulatedRunner>();
  const log = opts.log ?? (() => {});

  async function run(r: SimulatedRunner, b: BootstrapInstance) {
    const alive = () => r.phase !== "stopped";
    const token = { authorization: `Bearer ${b["instance-token"]}` };
    const status = (s: string, message: string, extra: object = {}) =>
      call(`${b["callback-url"]}/status`, { method: "POST", headers: { ...token, "content-type": "application/json" }, body: JSON.stringify({ status: s, message, ...extra }) }, alive);
    const fail = async (message: string) => {
      r.phase = "failed";
      r.error = message;
      log({ event: "sim_runner_failed", instance: r.name, message });
      if (alive()) await status("failed", message, r.agent_id ? { agent_id: r.agent_id } : {}).catch(() => {});
    };

    await sleep(config.boot_delay_ms);
    if (!alive()) return;
    r.phase = "bootstrapping";
    if (Math.random() < config.boot_failure_rate) return fail("simulated boot failure");
    const meta = await call(`${b["metadata-url"]}/runner-metadata`, { headers: token }, alive);
    if (!meta.ok) return fail(`runner-metadata: ${meta.status} ${await meta.text()}`);
    await meta.arrayBuffer();
    await status("installing", "downloading runner");
    if (!b.jit_config_enabled) return fail("the simulator runs JIT runners only");
    const files: Record<string, string> = {};
    for (const f of ["runner", "credentials", "credentials_rsaparams"]) {
      const res = await call(`${b["metadata-url"]}/credentials/${f}`, { headers: token }, alive);
      if (!res.ok) return fail(`credentials/${f}: ${res.status} ${await res.text()}`);
      files[f] = await res.text();
    }
    const dotRunner = JSON.parse(files.runner!) as { agentId: number; agentName: string; serverUrl?: string };
    const creds = JSON.parse(files.credentials!) as { data: { clientId: string } };
    if (!dotRunner.serverUrl) return fail(".runner has no serverUrl");
    r.agent_id = dotRunner.agentId;
    r.server_url = dotRunner.serverUrl;
    await status("installing", "configuring runner", { agent_id: r.agent_id });
    await call(`${b["callback-url"]}/system-info`, { method: "POST", headers: { ...token, "content-type": "application/json" }, body: JSON.stringify({ os_name: "ubuntu", os_version: "24.04", agent_id: r.agent_id }) }, alive);
    const gh = runnerSession(dotRunner.serverUrl);
    const online = await gh.connect({ agent_id: dotRunner.agentId, name: dotRunner.agentName, client_id: creds.data.clientId, os: b.os_type });
    if (online.status !== 200) return fail(`GitHub refused the runner: ${online.status} ${JSON.stringify(online.body)}`);
    const idle = await status("idle", "runner successfully installed", { agent_id: r.agent_id });
    if (!idle.ok) log({ event: "sim_idle_refused", instance: r.name, status: idle.status, body: await idle.text() });
    if (!alive()) return;
    r.phase = "idle";
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

  const shim = await startFakeShim({
    port: opts.port,
    hooks: {
      created(tenant: string, m: FakeMachine) {
        const r: SimulatedRunner = { tenant, name: m.name, provider_id: m.provider_id, phase: "booting", agent_id: null, job_id: null, created_at: Date.now(), server_url: null };
        runners.set(m.provider_id, r);
        log({ event: "sim_machine_created", instance: m.name });
        void run(r, m.bootstrap as BootstrapInstance).catch((err) => {
          r.error = err instanceof Error ? err.message : String(err);
          if (r.phase !== "stopped") r.phase = "failed";
        });
      },
      deleted(_tenant: string, m: FakeMachine) {
        const r = runners.get(m.provider_id);
        if (!r) return;
        const lostRunner = (r.phase === "idle" || r.phase === "busy") && r.agent_id !== null && r.server_url;
        r.phase = "stopped";
        runners.delete(m.provider_id);
        log({ event: "sim_machine_deleted", instance: m.name });
        // The machine is gone, so is its runner's connection: GitHub shows it offline.
        if (lostRunner) void runnerSession(r.server_url!).disconnect(r.agent_id!).catch(() => {});
      },
    },
    control(method, segments, body) {
      if (segments[0] !== "simulator") return null;
      if (segments.length === 1 && method === "GET") return { status: 200, body: config };
      if (segments.length === 1 && method === "PUT") {
        const b = (body ?? {}) as Partial<SimulatorConfig>;
        for (const k of Object.keys(config) as (keyof SimulatorConfig)[]) if (typeof b[k] === "number") config[k] = b[k]!;
        return { status: 200, body: config };
      }
      if (segments[1] === "runners" && method === "GET") return { status: 200, body: [...runners.values()] };
      return { status: 404, body: { error: "no such simulator route" } };
    },
  });
  return { ...shim, config, runners };
}
