/**
 * The simulator shim: provider shim protocol v1.2 (the fake shim's server, tenants and fault rules)
 * whose machines are simulated runners (./machine.ts): each machine the coordinator creates
 * boots after a delay and then behaves like a real runner with a JIT config. It offers batch
 * create (`POST /v1/instances:batch`) of up to `batchCreateMax` (default 100; 0: protocol v1
 * only; per tenant: `batch_create_max` on PATCH /_control/tenants/{t}), and a flavor catalogue
 * (`GET /v1/flavors`): `flavors` (default DEFAULT_SIMULATOR_FLAVORS, ./flavors.ts; null: none, a
 * v1.1 shim; per tenant: `flavors` on PATCH /_control/tenants/{t}). A shaped create must name a
 * catalogued flavor of its architecture, with spot and disk the flavor allows (400 naming it
 * otherwise); a create without `shape` (a v1 scale set's) may name any flavor, as before.
 * Each machine keeps the flavor, image and shape it was created with, on the runners and the
 * timeline below.
 *
 * A machine deleted before its runner finished stops at once (its runner goes offline).
 * Knobs (PUT /_control/simulator): boot_delay_ms, boot_jitter (each machine's delay drawn in
 * boot_delay_ms × (1 ± boot_jitter)), job_ms, boot_failure_rate (the machine reports `failed`),
 * poll_ms. Create/delete error rates, latency and hangs are the fake shim's fault rules with
 * `probability` (PUT /_control/tenants/{t}/faults).
 *
 * GET /_control/simulator/timeline[?tenant=T&pool=P&since=MS] lists when each machine was
 * created, booted, configured, idle and deleted (./timeline.ts), the live ones and the last
 * 20,000 deleted, oldest first.
 */

import type { BootstrapInstance, FlavorCatalogue } from "../../src/providers/shim-protocol.ts";
import { type FakeMachine, type FakeShim, startFakeShim } from "../../test/fake-shim/server.ts";
import { DEFAULT_SIMULATOR_FLAVORS } from "./flavors.ts";
import { bootRunner, type SimulatedRunner, type SimulatorConfig, stopRunner } from "./machine.ts";
import { type MachineTimeline, matchesTimeline, TimelineHistory, timelineFilter } from "./timeline.ts";

export { DEFAULT_SIMULATOR_FLAVORS } from "./flavors.ts";
export type { RunnerPhase, SimulatedRunner, SimulatorConfig } from "./machine.ts";
export type { MachineTimeline } from "./timeline.ts";

/** A runner's timeline as the control API shows it. */
function timelineOf(r: SimulatedRunner): MachineTimeline {
  return {
    tenant: r.tenant,
    pool_id: r.pool_id ?? "",
    name: r.name,
    provider_id: r.provider_id,
    boot_delay_ms: r.boot_delay_ms ?? null,
    flavor: r.flavor ?? null,
    image: r.image ?? null,
    shape: r.shape ?? null,
    created_at: r.created_at,
    booted_at: r.booted_at ?? null,
    configured_at: r.configured_at ?? null,
    idle_at: r.idle_at ?? null,
    deleted_at: r.deleted_at ?? null,
  };
}

/** The largest batch create the simulator offers unless told otherwise (the coordinator's own cap). */
export const DEFAULT_BATCH_CREATE_MAX = 100;

export interface Simulator extends FakeShim {
  config: SimulatorConfig;
  runners: Map<string, SimulatedRunner>;
}

export async function startSimulator(
  opts: {
    port?: number;
    config?: Partial<SimulatorConfig>;
    log?: (line: object) => void;
    batchCreateMax?: number;
    /** Every tenant's catalogue unless given its own (default DEFAULT_SIMULATOR_FLAVORS; null: none). */
    flavors?: FlavorCatalogue | null;
  } = {},
): Promise<Simulator> {
  const config: SimulatorConfig = { boot_delay_ms: 100, boot_jitter: 0, job_ms: 500, boot_failure_rate: 0, poll_ms: 50, ...opts.config };
  const runners = new Map<string, SimulatedRunner>();
  const history = new TimelineHistory();
  const log = opts.log ?? (() => {});

  const shim = await startFakeShim({
    port: opts.port,
    batchCreateMax: opts.batchCreateMax ?? DEFAULT_BATCH_CREATE_MAX,
    flavors: opts.flavors === undefined ? DEFAULT_SIMULATOR_FLAVORS : (opts.flavors ?? undefined),
    hooks: {
      created(tenant: string, m: FakeMachine) {
        const r: SimulatedRunner = {
          tenant,
          name: m.name,
          provider_id: m.provider_id,
          phase: "booting",
          agent_id: null,
          job_id: null,
          created_at: Date.now(),
          pool_id: m.pool_id,
          flavor: m.flavor,
          image: m.image,
          shape: m.shape ?? null,
          server_url: null,
        };
        runners.set(m.provider_id, r);
        log({ event: "sim_machine_created", instance: m.name });
        const b = m.bootstrap as BootstrapInstance;
        void bootRunner(
          r,
          { metadataUrl: b["metadata-url"], token: b["instance-token"], callbackUrl: b["callback-url"] },
          config,
          log,
        ).catch((err) => {
          r.error = err instanceof Error ? err.message : String(err);
          if (r.phase !== "stopped") r.phase = "failed";
          log({ event: "sim_runner_failed", instance: m.name, message: r.error });
        });
      },
      deleted(_tenant: string, m: FakeMachine) {
        const r = runners.get(m.provider_id);
        if (!r) return;
        stopRunner(r);
        r.deleted_at = Date.now();
        runners.delete(m.provider_id);
        history.add(timelineOf(r));
        log({ event: "sim_machine_deleted", instance: m.name });
      },
    },
    control(method, segments, body, query) {
      if (segments[0] !== "simulator") return null;
      if (segments.length === 1 && method === "GET") return { status: 200, body: config };
      if (segments.length === 1 && method === "PUT") {
        const b = (body ?? {}) as Partial<SimulatorConfig>;
        for (const k of Object.keys(config) as (keyof SimulatorConfig)[]) if (typeof b[k] === "number") config[k] = b[k]!;
        return { status: 200, body: config };
      }
      if (segments[1] === "runners" && method === "GET") return { status: 200, body: [...runners.values()] };
      if (segments[1] === "timeline" && method === "GET") {
        const f = timelineFilter(query);
        if ("error" in f) return { status: 400, body: f };
        const live = [...runners.values()].map(timelineOf).filter((t) => matchesTimeline(t, f));
        return { status: 200, body: [...history.list(f), ...live].sort((a, b) => a.created_at - b.created_at) };
      }
      return { status: 404, body: { error: "no such simulator route" } };
    },
  });
  return { ...shim, config, runners };
}
