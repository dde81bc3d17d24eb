import { appendFileSync } from "node:fs";
/**
 * The whole product on one machine: the fake GitHub (playing workflows), the simulator shim and
 * the coordinator under `wrangler dev` (bench/harness.mjs: own config, secrets and persisted
 * state), wired together: a repository with a PAT, its webhook secret, the simulator registered
 * as a provider, webhooks delivered to the coordinator. With `ec2`, also the EC2 shim Worker
 * under `wrangler dev` and the fake EC2 behind it, registered as a second provider
 * (e2e/ec2-cloud.ts). Loopback only.
 */
import { type Coordinator, startCoordinator } from "../bench/harness.mjs";
import { fakeWorld, type HarnessWorld } from "../bench/harness-world.mjs";
import { type Simulator, type SimulatorConfig, startSimulator } from "../shims/simulator/simulator.ts";
import type { Ec2Faults } from "../test/fake-ec2/types.ts";
import { FakeWorld } from "../test/fake-github/control-client.ts";
import { type FakeGithub, startFakeGithub } from "../test/fake-github/server.ts";
import type { DeliveryConfig, Seed } from "../test/fake-github/types.ts";
import type { FakeMachine } from "../test/fake-shim/types.ts";
import type { CloudUnderTest, StartCloud } from "./cloud.ts";
import { type Ec2Cloud, startEc2Cloud } from "./ec2-cloud.ts";
import type { StackProfile } from "./profiles.ts";

/** The coordinator's timers, short, so that a scenario settles in seconds (e2e/scenarios.ts, e2e/forges.ts, e2e/shapes.ts). */
export const E2E_TIMINGS = {
  RECONCILE_INTERVAL_SECONDS: "2",
  // A scale set with nothing to do ticks every 5 minutes by default, every 30 once it has had no
  // machine for an hour or never had one (src/scaleset/idle-tick.ts).
  IDLE_RECONCILE_INTERVAL_SECONDS: "5",
  QUIET_RECONCILE_INTERVAL_SECONDS: "5",
  SCALE_DOWN_IDLE_SECONDS: "2",
  ORPHAN_CHECK_SECONDS: "10",
  CREATE_BACKOFF_SECONDS: "1",
  // Rows a killed coordinator left mid-create are asked about after this (default 2 minutes).
  STUCK_GRACE_SECONDS: "5",
  OPERATION_POLL_SECONDS: "5",
  // Deliveries GitHub could not make (a kill drops those in flight) are looked for every 10 s
  // (default 60; scenario B keeps the default, to measure recovery as shipped).
  DELIVERY_RECOVERY_SECONDS: "10",
};

export interface Stack {
  github: FakeGithub;
  sim: Simulator;
  coordinator: Coordinator;
  w: HarnessWorld;
  gh: FakeWorld;
  machines(): Promise<FakeMachine[]>;
  /**
   * How long the simulator takes over each create (and batch create) from now on; null: the
   * profile's own. The machine is made after the wait even if the caller is gone by then, as a
   * cloud finishes what it started: a kill during the wait lands inside creates.
   */
  slowCreates(ms: number | null): Promise<void>;
  /** With the `ec2` option. */
  ec2?: Ec2Cloud;
  /** With the `cloud` option. */
  cloud?: CloudUnderTest;
  stop(): Promise<void>;
}

export interface StackOptions {
  vars?: Record<string, string>;
  /** The simulator's settings; they win over the profile's (e2e/profiles.ts). */
  sim?: Partial<SimulatorConfig>;
  delivery?: Partial<DeliveryConfig>;
  /** More for the fake GitHub's world before the delivery is configured (e.g. an enterprise's organizations). */
  githubSeed?: Seed;
  log?: (line: object) => void;
  /** More fields for the simulator's provider registration (e.g. timeout_seconds). */
  provider?: Record<string, unknown>;
  /** A file for the coordinator's log lines. */
  coordinatorLog?: string;
  /** Opens the coordinator's DevTools protocol on this port (wrangler dev --inspector-port; bench/cpu-profile.ts). */
  inspectorPort?: number;
  /** false: wrangler dev without its local observability (a trace collector in the coordinator's workerd; docs/performance.md). */
  localObservability?: boolean;
  /** How the fakes and the coordinator behave (e2e/profiles.ts); loopback when absent. `vars` win over its vars. */
  profile?: StackProfile;
  /** Also EC2: the shim Worker and the fake EC2 (with these faults); its machines are simulated runners with `sim`'s timings. */
  ec2?: { faults?: Ec2Faults; shimLog?: string };
  /** Also another cloud behind its shim Worker (e.g. e2e/hetzner-cloud.ts), registered as a second provider. */
  cloud?: StartCloud;
}

/**
 * Where a run keeps its logs when E2E_LOG_DIR=dir is set (else nowhere): the coordinator's, what
 * the simulated machines did (one JSON line each), and each shim Worker's by `kind`.
 */
export function scenarioLogs(scenario: string, t0: number) {
  const dir = process.env.E2E_LOG_DIR;
  const file = (kind: string) => (dir ? `${dir}/${kind}-${scenario}-${t0}.log` : undefined);
  const machines = file("machines");
  return {
    coordinatorLog: file("coordinator"),
    log: machines
      ? (line: object) => appendFileSync(machines, `${JSON.stringify({ ts: new Date().toISOString(), ...line })}\n`)
      : undefined,
    shimLog: file,
  };
}

export async function startStack(opts: StackOptions = {}): Promise<Stack> {
  const [github, sim] = await Promise.all([
    startFakeGithub(),
    startSimulator({ config: { ...opts.profile?.sim, ...opts.sim }, log: opts.log }),
  ]);
  let coordinator: Coordinator | undefined;
  const cleanup = () => coordinator?.killNow();
  process.once("exit", cleanup);
  try {
    coordinator = await startCoordinator(
      { NUDGE_DELAY_SECONDS: "0", ...opts.profile?.vars, ...opts.vars },
      {
        log: opts.coordinatorLog,
        inspectorPort: opts.inspectorPort,
        localObservability: opts.localObservability,
      },
    );
    const w = await fakeWorld(coordinator, github.url, sim.url, "sim-shim-secret-0000000001", opts.provider);
    const gh = new FakeWorld(w.world);
    if (opts.profile?.github) await gh.setProfile(opts.profile.github);
    if (opts.profile && opts.profile.shimBatchMax !== null) {
      const res = await fetch(w.shimControl, {
        method: "PATCH",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ batch_create_max: opts.profile.shimBatchMax }),
      });
      if (!res.ok) throw new Error(`simulator batch create: ${res.status} ${await res.text()}`);
    }
    if (opts.profile?.shimFaults) {
      const res = await fetch(`${w.shimControl}/faults`, {
        method: "PUT",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(opts.profile.shimFaults),
      });
      if (!res.ok) throw new Error(`simulator faults: ${res.status} ${await res.text()}`);
    }
    if (opts.githubSeed) await gh.seed(opts.githubSeed);
    await gh.deliverWebhooksTo({
      url: `${coordinator.url}/webhooks/github`,
      secret: w.webhookSecret,
      // The repository lives on the fake's endpoint (base_url https://github.example.test).
      enterprise_host: "github.example.test",
      // GitHub's record of it is a hook of the repository, which delivery recovery reads; one
      // attempt per delivery, as GitHub makes.
      scope: "repos/octo/app",
      ...opts.delivery,
    });
    const c = coordinator;
    const ec2 = opts.ec2
      ? await startEc2Cloud({ coordinator: c, sim: sim.config, faults: opts.ec2.faults, log: opts.log, shimLog: opts.ec2.shimLog })
      : undefined;
    const cloud = opts.cloud ? await opts.cloud({ coordinator: c, sim: sim.config, log: opts.log ?? (() => {}) }) : undefined;
    return {
      ec2,
      cloud,
      github,
      sim,
      coordinator: c,
      w,
      gh,
      machines: async () => (await fetch(`${w.shimControl}/instances`)).json() as Promise<FakeMachine[]>,
      async slowCreates(ms) {
        const own = opts.profile?.shimFaults?.latency_ms ?? {};
        const latency =
          ms === null ? { create: own.create ?? 0, create_batch: own.create_batch ?? own.create ?? 0 } : { create: ms, create_batch: ms };
        const res = await fetch(`${w.shimControl}/faults`, {
          method: "PATCH",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ latency_ms: latency }),
        });
        if (!res.ok) throw new Error(`simulator faults: ${res.status} ${await res.text()}`);
      },
      async stop() {
        await c.stop();
        await Promise.all([sim.stop(), github.close(), ec2?.stop(), cloud?.stop()]);
        process.off("exit", cleanup);
      },
    };
  } catch (err) {
    cleanup();
    await Promise.all([sim.stop(), github.close()]);
    throw err;
  }
}
