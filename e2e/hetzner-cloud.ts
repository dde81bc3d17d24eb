/**
 * Hetzner Cloud for the end-to-end runs: the fake Hetzner Cloud whose servers boot into
 * simulated runners, and the Hetzner shim Worker under `wrangler dev` in front of it, registered
 * with the coordinator as a provider. A server knows only its user data, as a real one would: on
 * its first boot it reads the metadata URL and instance token out of the cloud-init the shim
 * rendered, then behaves like the simulator's machines; shut down or deleted, its runner goes.
 *
 * Also the HETZNER scenario's cloud-specific parts (its scale sets, faults and checks), so
 * the scenario list (e2e/scenarios.ts) only names it.
 */
import { bootRunner, type SimulatedRunner, stopRunner } from "../shims/simulator/machine.ts";
import { readBootstrap } from "../test/fake-ec2/user-data-reader.ts";
import { createProject, type FakeHetznerProject, type HetznerFaults } from "../test/fake-hetzner/control.ts";
import { startFakeHetzner } from "../test/fake-hetzner/server.ts";
import type { CloudUnderTest, StartCloud } from "./cloud.ts";
import { startHetznerShim } from "./hetzner-shim.ts";
import type { Stack } from "./stack.ts";

export interface HetznerCloud extends CloudUnderTest {
  project: FakeHetznerProject;
  runners: Map<number, SimulatedRunner>;
}

const POOL_LABEL = "edgerunner-pool-id";

export function hetznerCloud(opts: { faults?: HetznerFaults; shimLog?: string } = {}): StartCloud {
  return async ({ coordinator, sim, log }): Promise<HetznerCloud> => {
    const runners = new Map<number, SimulatedRunner>();
    const fake = await startFakeHetzner({
      hooks: {
        booted(project, s, firstBoot) {
          // cloud-init runs user data on the first boot only.
          if (!firstBoot || !s.user_data) return;
          const boot = readBootstrap(Buffer.from(s.user_data).toString("base64"));
          if (!boot) return log({ event: "hetzner_server_no_bootstrap", server: s.id });
          const r: SimulatedRunner = {
            tenant: project,
            name: s.name,
            provider_id: String(s.id),
            phase: "booting",
            agent_id: null,
            job_id: null,
            created_at: Date.now(),
            server_url: null,
          };
          runners.set(s.id, r);
          void bootRunner(r, { metadataUrl: boot.metadataUrl, token: boot.token }, sim, log).catch((err) => {
            r.error = err instanceof Error ? err.message : String(err);
            if (r.phase !== "stopped") r.phase = "failed";
          });
        },
        stopped(_project, s) {
          const r = runners.get(s.id);
          if (!r) return;
          stopRunner(r);
          runners.delete(s.id);
        },
      },
    });
    const project = await createProject(fake.url, { config: { boot_delay_ms: 100, stop_delay_ms: 200 } });
    if (opts.faults) await project.setFaults(opts.faults);
    const secret = "hetzner-shim-e2e-secret-0123456789abcdef";
    let shim: Awaited<ReturnType<typeof startHetznerShim>>;
    try {
      shim = await startHetznerShim({ endpoint: project.endpoint, project, secret, log: opts.shimLog });
    } catch (err) {
      await fake.stop();
      throw err;
    }
    const provider = `hetzner-${project.id}`;
    await coordinator.api("POST", "/providers", { name: provider, url: shim.url, secret });
    return {
      project,
      runners,
      provider,
      image: "ubuntu-24.04",
      flavor: "cx22",
      async liveMachines() {
        return (await project.servers()).filter((s) => !s.deleted).map((s) => ({ pool_id: s.labels[POOL_LABEL] ?? "", name: s.name }));
      },
      async created() {
        const [servers, requests] = await Promise.all([project.servers(), project.requests()]);
        const createCalls = requests.filter((r) => r.method === "POST" && r.path === "/servers" && r.status === 201).length;
        return { machines: servers.length, createCalls };
      },
      async stop() {
        for (const r of runners.values()) r.phase = "stopped";
        await shim.stop();
        await fake.stop();
      },
    };
  };
}

/**
 * The HETZNER scenario: two scale sets; the flavor (cx22) has no room in fsn1 at all and none
 * in nbg1 for its first three creates (those fall back to cpx21), the hel1 scale set hits the
 * project's server limit twice (503, the coordinator tries again), and two creates are rate
 * limited (429).
 */
export const HETZNER_SCENARIO = {
  sim: { boot_delay_ms: 0, job_ms: 400 },
  scaleSets: [
    {
      name: "hz-fallback",
      labels: ["self-hosted", "linux", "hetzner"],
      max: 4,
      minIdle: 0,
      extraSpecs: { locations: ["fsn1", "nbg1"], server_types: ["cpx21"] },
    },
    {
      name: "hz-hel1",
      labels: ["self-hosted", "linux", "hetzner-hel1"],
      max: 4,
      minIdle: 0,
      extraSpecs: { locations: ["hel1"], labels: { team: "ci" } },
    },
  ],
  bursts: [
    { "hz-fallback": 4, "hz-hel1": 4 },
    { "hz-fallback": 4, "hz-hel1": 4 },
    { "hz-fallback": 4, "hz-hel1": 4 },
  ],
  burstGapMs: 3000,
  faults: {
    create: [
      { code: "resource_unavailable", server_type: "cx22", location: "fsn1" },
      { code: "placement_error", server_type: "cx22", location: "nbg1", times: 3 },
      { code: "resource_limit_exceeded", location: "hel1", times: 2 },
    ],
    calls: [{ method: "POST", path: "/servers", code: "rate_limit_exceeded", status: 429, times: 2 }],
  } satisfies HetznerFaults,
  // Each create waits for Hetzner's create action, so jobs start later than on EC2.
  jobsTimeoutMs: 120_000,
  settleTimeoutMs: 45_000,
};

/** Which servers the scenario's faults leave room for: anything else is a create where there was none. */
export async function checkHetzner(stack: Stack, ids: Map<string, { name: string }>) {
  const violations: string[] = [];
  const project = (stack.cloud as HetznerCloud).project;
  const [servers, requests] = await Promise.all([project.servers(), project.requests()]);
  const creates = requests.filter((r) => r.method === "POST" && r.path === "/servers");
  const createdAs: Record<string, number> = {};
  for (const s of servers) {
    const spec = ids.get(s.labels[POOL_LABEL] ?? "");
    if (!spec || !s.labels["edgerunner-controller-id"]) {
      violations.push(`server ${s.id} lacks its labels: ${JSON.stringify(s.labels)}`);
      continue;
    }
    const as = `${spec.name}: ${s.server_type} in ${s.location}`;
    createdAs[as] = (createdAs[as] ?? 0) + 1;
    if (s.server_type === "cx22" && s.location === "fsn1") violations.push(`server ${s.id} created as ${as}, where there was no room`);
    if (!s.deleted) violations.push(`server ${s.id} (${as}) is still ${s.status}`);
  }
  const count = (code: string) => creates.filter((r) => r.error_code === code).length;
  if (!count("resource_unavailable")) violations.push("no create hit resource_unavailable: the location fallback was not exercised");
  if (count("placement_error") !== 3) violations.push(`${count("placement_error")} placement errors, expected 3`);
  if (count("resource_limit_exceeded") !== 2) violations.push(`${count("resource_limit_exceeded")} limit errors, expected 2`);
  if (!Object.keys(createdAs).some((k) => k.startsWith("hz-fallback: cpx21"))) violations.push("no server fell back to the second type");
  if (count("rate_limit_exceeded") !== 2) violations.push(`${count("rate_limit_exceeded")} rate-limited creates, expected 2`);
  return {
    violations,
    summary: {
      hetzner: {
        create_calls: creates.length,
        capacity_errors: count("resource_unavailable") + count("placement_error"),
        limit_errors: count("resource_limit_exceeded"),
        rate_limited: count("rate_limit_exceeded"),
        servers: servers.length,
        created_as: createdAs,
      },
    },
  };
}
