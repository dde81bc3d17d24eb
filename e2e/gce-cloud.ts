/**
 * Google Compute Engine for the end-to-end runs: the fake Compute Engine whose instances boot
 * into simulated runners, and the GCE shim Worker under `wrangler dev` in front of it,
 * registered with the coordinator as a provider. An instance knows only its startup script, as
 * a real one would: on its first boot it reads the metadata URL and instance token out of the
 * bootstrap the shim wrote there, then behaves like the simulator's machines; stopped or
 * deleted, its runner goes.
 *
 * Also the GCE scenario's cloud-specific parts (its scale sets, faults and checks), so
 * the scenario list (e2e/scenarios.ts) only names it.
 */
import { bootRunner, type SimulatedRunner, stopRunner } from "../shims/simulator/machine.ts";
import { createProject, type FakeGceProject, type GceFaults, type GceInstance } from "../test/fake-gce/control.ts";
import { startFakeGce } from "../test/fake-gce/server.ts";
import { readStartupScript } from "../test/fake-gce/startup-script-reader.ts";
import type { CloudUnderTest, StartCloud } from "./cloud.ts";
import { startGceShim } from "./gce-shim.ts";
import type { Stack } from "./stack.ts";

export interface GceCloud extends CloudUnderTest {
  project: FakeGceProject;
  runners: Map<string, SimulatedRunner>;
}

const POOL_LABEL = "edgerunner-pool-id";
const zoneOf = (url: string | null | undefined) => (url ?? "").slice((url ?? "").lastIndexOf("/") + 1);

export function gceCloud(opts: { faults?: GceFaults; shimLog?: string } = {}): StartCloud {
  return async ({ coordinator, sim, log }): Promise<GceCloud> => {
    const runners = new Map<string, SimulatedRunner>();
    const booted = new Set<string>();
    const fake = await startFakeGce({
      hooks: {
        booted(project, i: GceInstance) {
          // The startup script runs at every boot, but only the first one does anything.
          if (booted.has(i.id)) return;
          booted.add(i.id);
          const boot = readStartupScript(i.metadata);
          if (!boot) return log({ event: "gce_instance_no_bootstrap", instance: i.name });
          const r: SimulatedRunner = {
            tenant: project,
            name: i.name,
            provider_id: i.id,
            phase: "booting",
            agent_id: null,
            job_id: null,
            created_at: Date.now(),
            server_url: null,
          };
          runners.set(i.id, r);
          void bootRunner(r, { metadataUrl: boot.metadataUrl, token: boot.token }, sim, log).catch((err) => {
            r.error = err instanceof Error ? err.message : String(err);
            if (r.phase !== "stopped") r.phase = "failed";
          });
        },
        stopped(_project, i: GceInstance) {
          const r = runners.get(i.id);
          if (!r) return;
          stopRunner(r);
          runners.delete(i.id);
        },
      },
    });
    const project = await createProject(fake.url, { config: { boot_delay_ms: 100, stop_delay_ms: 200, operation_ms: 50 } });
    if (opts.faults) await project.setFaults(opts.faults);
    const secret = "gce-shim-e2e-secret-0123456789abcdef";
    let shim: Awaited<ReturnType<typeof startGceShim>>;
    try {
      shim = await startGceShim({ endpoint: project.endpoint, project, secret, log: opts.shimLog });
    } catch (err) {
      await fake.stop();
      throw err;
    }
    const provider = `gce-${project.id}`;
    await coordinator.api("POST", "/providers", { name: provider, url: shim.url, secret });
    return {
      project,
      runners,
      provider,
      image: "projects/debian-cloud/global/images/family/debian-12",
      flavor: "e2-standard-2",
      async liveMachines() {
        // A deleted instance shows STOPPING until it is gone (nothing in the scenario stops one), as EC2's shutting-down.
        return (await project.instances())
          .filter((i) => i.status !== "STOPPING")
          .map((i) => ({ pool_id: i.labels?.[POOL_LABEL] ?? "", name: i.name }));
      },
      async created() {
        // Deleted instances are gone from GCE: count the inserts whose operation succeeded.
        const made = (await project.requests()).filter(
          (r) => r.method === "compute.instances.insert" && r.status === 200 && r.error === null,
        );
        return { machines: made.length, createCalls: made.length };
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
 * The GCE scenario: two scale sets over zones us-central1-a and -b. Zone a has no capacity for
 * standard machines at all, so every standard insert there fails on its operation with
 * ZONE_RESOURCE_POOL_EXHAUSTED and moves to b; the Spot scale set finds no Spot capacity in a
 * and the project's Spot quota (QUOTA_EXCEEDED) hit three times, so those creates fall back to
 * standard; two inserts are throttled (403 rateLimitExceeded: the coordinator tries again).
 */
export const GCE_SCENARIO = {
  sim: { boot_delay_ms: 0, job_ms: 400 },
  scaleSets: [
    {
      name: "gce-spot",
      labels: ["self-hosted", "linux", "gce-spot"],
      max: 4,
      minIdle: 0,
      extraSpecs: { zones: ["us-central1-a", "us-central1-b"], capacity: "spot-with-fallback", network_tags: ["ci-runner"] },
    },
    {
      name: "gce-std",
      labels: ["self-hosted", "linux", "gce"],
      max: 4,
      minIdle: 0,
      extraSpecs: { zones: ["us-central1-a", "us-central1-b"], labels: { team: "ci" }, disk_size_gb: 30 },
    },
  ],
  bursts: [
    { "gce-spot": 4, "gce-std": 4 },
    { "gce-spot": 4, "gce-std": 4 },
    { "gce-spot": 4, "gce-std": 4 },
  ],
  burstGapMs: 3000,
  faults: {
    insert: [
      { code: "ZONE_RESOURCE_POOL_EXHAUSTED", zone: "us-central1-a", provisioning_model: "STANDARD" },
      { code: "ZONE_RESOURCE_POOL_EXHAUSTED", zone: "us-central1-a", provisioning_model: "SPOT" },
      { code: "QUOTA_EXCEEDED", zone: "us-central1-b", provisioning_model: "SPOT", times: 3 },
    ],
    methods: [{ method: "compute.instances.insert", status: 403, reason: "rateLimitExceeded", times: 2 }],
  } satisfies GceFaults,
  jobsTimeoutMs: 90_000,
  settleTimeoutMs: 45_000,
};

/** Which instances the scenario's faults leave room for: anything else is an insert where there was no capacity. */
export async function checkGce(stack: Stack, ids: Map<string, { name: string }>) {
  const violations: string[] = [];
  const project = (stack.cloud as GceCloud).project;
  // The coordinator counts a machine deleted once GCE accepted the delete; the instance shows
  // STOPPING until that operation is done (stop_delay_ms). Those get a few seconds to go; one
  // still there after that was never deleted.
  let left = await project.instances();
  for (let i = 0; i < 40 && left.some((x) => x.status === "STOPPING"); i++) {
    await new Promise((r) => setTimeout(r, 250));
    left = await project.instances();
  }
  const requests = await project.requests();
  const inserts = requests.filter((r) => r.method === "compute.instances.insert");
  const madeAs: Record<string, number> = {};
  for (const r of inserts.filter((x) => x.status === 200 && x.error === null)) {
    const body = r.body as GceInstance;
    const spec = ids.get(body.labels?.[POOL_LABEL] ?? "");
    if (!spec || !body.labels?.["edgerunner-controller-id"]) {
      violations.push(`instance ${body.name} lacks its labels: ${JSON.stringify(body.labels)}`);
      continue;
    }
    const model = body.scheduling?.provisioningModel ?? "STANDARD";
    const as = `${spec.name}: ${model} in ${r.zone}`;
    madeAs[as] = (madeAs[as] ?? 0) + 1;
    if (r.zone === "us-central1-a") violations.push(`${body.name} was made as ${as}, where the fake GCE had no capacity`);
  }
  for (const i of left) violations.push(`${i.name} (${zoneOf(i.zone)}) is still ${i.status}`);
  const count = (code: string) => inserts.filter((r) => r.error === code).length;
  if (!count("ZONE_RESOURCE_POOL_EXHAUSTED"))
    violations.push("no insert hit ZONE_RESOURCE_POOL_EXHAUSTED: the zone fallback was not exercised");
  if (count("QUOTA_EXCEEDED") !== 3) violations.push(`${count("QUOTA_EXCEEDED")} Spot quota errors, expected 3`);
  if (!Object.keys(madeAs).some((k) => k.startsWith("gce-spot: STANDARD"))) violations.push("no Spot create fell back to standard");
  if (!Object.keys(madeAs).some((k) => k.startsWith("gce-spot: SPOT"))) violations.push("no Spot instance was made");
  if (count("rateLimitExceeded") !== 2) violations.push(`${count("rateLimitExceeded")} throttled inserts, expected 2`);
  return {
    violations,
    summary: {
      gce: {
        insert_calls: inserts.length,
        zone_exhausted: count("ZONE_RESOURCE_POOL_EXHAUSTED"),
        quota_exceeded: count("QUOTA_EXCEEDED"),
        throttled: count("rateLimitExceeded"),
        made_as: madeAs,
      },
    },
  };
}
