/**
 * EC2 for the end-to-end runs: the fake EC2 whose instances boot into simulated runners, and the
 * EC2 shim Worker under `wrangler dev` in front of it, registered with the coordinator as a
 * provider. An instance knows only its user data, as a real one would: on its first boot it
 * reads the metadata URL and the instance token out of the cloud-init the shim rendered, then
 * behaves like the simulator's machines (shims/simulator/machine.ts); stopped or terminated, its
 * runner goes with it.
 *
 * Also the EC2 scenario's cloud-specific parts (its scale sets, faults and checks), so the
 * scenario list (e2e/scenarios.ts) only names it.
 */
import { bootRunner, type SimulatedRunner, type SimulatorConfig, stopRunner } from "../shims/simulator/machine.ts";
import { createAccount, type Ec2Faults, type FakeEc2Account, type FakeInstance } from "../test/fake-ec2/control.ts";
import { type FakeEc2, startFakeEc2 } from "../test/fake-ec2/server.ts";
import { readBootstrap } from "../test/fake-ec2/user-data-reader.ts";
import { type Ec2ShimWorker, startEc2Shim } from "./ec2-shim.ts";
import type { Stack } from "./stack.ts";

export const EC2_LIVE_STATES = new Set(["pending", "running", "stopping", "stopped"]);

export interface Ec2Cloud {
  fake: FakeEc2;
  account: FakeEc2Account;
  shim: Ec2ShimWorker;
  /** The provider name registered with the coordinator. */
  provider: string;
  runners: Map<string, SimulatedRunner>;
  /** Every instance the account has, terminated ones too. */
  instances(): Promise<FakeInstance[]>;
  stop(): Promise<void>;
}

export async function startEc2Cloud(opts: {
  coordinator: { api(method: string, path: string, body?: unknown): Promise<any> };
  sim: SimulatorConfig;
  faults?: Ec2Faults;
  log?: (line: object) => void;
  shimLog?: string;
}): Promise<Ec2Cloud> {
  const runners = new Map<string, SimulatedRunner>();
  const log = opts.log ?? (() => {});
  const fake = await startFakeEc2({
    hooks: {
      booted(account, i, firstBoot) {
        // cloud-init runs user data on the first boot only.
        if (!firstBoot || !i.userData) return;
        const boot = readBootstrap(i.userData);
        if (!boot) return log({ event: "ec2_instance_no_bootstrap", instance: i.instanceId });
        const r: SimulatedRunner = {
          tenant: account,
          name: i.tags.Name ?? i.instanceId,
          provider_id: i.instanceId,
          phase: "booting",
          agent_id: null,
          job_id: null,
          created_at: Date.now(),
          server_url: null,
        };
        runners.set(i.instanceId, r);
        void bootRunner(r, { metadataUrl: boot.metadataUrl, token: boot.token }, opts.sim, log).catch((err) => {
          r.error = err instanceof Error ? err.message : String(err);
          if (r.phase !== "stopped") r.phase = "failed";
        });
      },
      stopped(_account, i) {
        const r = runners.get(i.instanceId);
        if (!r) return;
        stopRunner(r);
        runners.delete(i.instanceId);
      },
    },
  });
  const account = await createAccount(fake.url, { config: { boot_delay_ms: 100, stop_delay_ms: 200 } });
  if (opts.faults) await account.setFaults(opts.faults);
  const secret = "ec2-shim-e2e-secret-0123456789abcdef";
  let shim: Ec2ShimWorker;
  try {
    shim = await startEc2Shim({ endpoint: fake.url, account, secret, log: opts.shimLog });
  } catch (err) {
    await fake.stop();
    throw err;
  }
  const provider = `aws-ec2-${account.id}`;
  await opts.coordinator.api("POST", "/providers", { name: provider, url: shim.url, secret });
  return {
    fake,
    account,
    shim,
    provider,
    runners,
    instances: () => account.instances(),
    async stop() {
      for (const r of runners.values()) r.phase = "stopped";
      await shim.stop();
      await fake.stop();
    },
  };
}

const SUBNET_A = "subnet-0aaaaaaaaaaaaaaa1";
const SUBNET_B = "subnet-0bbbbbbbbbbbbbbb2";

/**
 * The EC2 scenario: two scale sets over subnets A and B. The flavor (c5.large) has no capacity in
 * subnet A, and none as spot anywhere; the account's spot limit is hit three times (those creates
 * go on-demand); two launches are throttled (the coordinator tries again).
 */
export const EC2_SCENARIO = {
  sim: { boot_delay_ms: 0, job_ms: 400 },
  scaleSets: [
    {
      name: "ec2-spot",
      labels: ["self-hosted", "linux", "ec2-spot"],
      max: 4,
      minIdle: 0,
      extraSpecs: { instance_types: ["m5.large"], subnet_ids: [SUBNET_A, SUBNET_B], capacity: "spot-with-fallback" },
    },
    {
      name: "ec2-od",
      labels: ["self-hosted", "linux", "ec2"],
      max: 4,
      minIdle: 0,
      extraSpecs: { subnet_ids: [SUBNET_A, SUBNET_B], tags: { team: "ci" } },
    },
  ],
  bursts: [
    { "ec2-spot": 4, "ec2-od": 4 },
    { "ec2-spot": 4, "ec2-od": 4 },
    { "ec2-spot": 4, "ec2-od": 4 },
  ],
  burstGapMs: 3000,
  faults: {
    launch: [
      // The flavor has no capacity in subnet A, and none as spot anywhere…
      { code: "InsufficientInstanceCapacity", instance_type: "c5.large", subnet_id: SUBNET_A },
      { code: "InsufficientInstanceCapacity", instance_type: "c5.large", market: "spot" },
      // …and the account's spot limit is hit three times (those creates go on-demand).
      { code: "MaxSpotInstanceCountExceeded", market: "spot", instance_type: "m5.large", times: 3 },
    ],
    actions: [{ action: "RunInstances", code: "RequestLimitExceeded", times: 2 }],
  } satisfies Ec2Faults,
  jobsTimeoutMs: 90_000,
  settleTimeoutMs: 45_000,
};

/** Which instances the EC2 scenario's faults leave room for, per scale set: anything else is a launch where there was no capacity. */
export async function checkEc2(stack: Stack, ids: Map<string, { name: string }>) {
  const violations: string[] = [];
  const account = stack.ec2!.account;
  const [instances, requests] = await Promise.all([account.instances(), account.requests()]);
  const launches = requests.filter((r) => r.action === "RunInstances");
  const launchedAs: Record<string, number> = {};
  for (const i of instances) {
    const spec = ids.get(i.tags["edgerunner:pool-id"] ?? "");
    if (!spec || !i.tags.Name || i.tags["edgerunner:controller-id"] === undefined) {
      violations.push(`instance ${i.instanceId} lacks its tags: ${JSON.stringify(i.tags)}`);
      continue;
    }
    const as = `${spec.name}: ${i.instanceType} ${i.lifecycle ?? "on-demand"} in ${i.subnetId === SUBNET_A ? "A" : "B"}`;
    launchedAs[as] = (launchedAs[as] ?? 0) + 1;
    if (i.instanceType === "c5.large" && (i.subnetId === SUBNET_A || i.lifecycle === "spot"))
      violations.push(`${i.instanceId} launched as ${as}, where the fake EC2 had no capacity`);
    if (EC2_LIVE_STATES.has(i.state)) violations.push(`${i.instanceId} (${as}) is still ${i.state}`);
  }
  const capacityErrors = launches.filter((r) =>
    ["InsufficientInstanceCapacity", "MaxSpotInstanceCountExceeded"].includes(r.error_code ?? ""),
  ).length;
  const throttled = launches.filter((r) => r.error_code === "RequestLimitExceeded").length;
  if (!capacityErrors) violations.push("no launch hit a capacity error: the fallback was not exercised");
  if (!Object.keys(launchedAs).some((k) => k.startsWith("ec2-spot") && k.includes("on-demand")))
    violations.push("no spot-with-fallback instance fell back to on-demand");
  if (!Object.keys(launchedAs).some((k) => k.includes("m5.large spot"))) violations.push("no spot instance of the second type");
  if (throttled !== 2) violations.push(`${throttled} throttled launches, expected 2`);
  return {
    violations,
    summary: {
      ec2: {
        run_instances_calls: launches.length,
        capacity_errors: capacityErrors,
        throttled,
        instances: instances.length,
        launched_as: launchedAs,
      },
    },
  };
}
