/**
 * EC2 for the end-to-end runs: the fake EC2 whose instances boot into simulated runners, and the
 * EC2 shim Worker under `wrangler dev` in front of it, registered with the coordinator as a
 * provider. An instance knows only its user data, as a real one would: on its first boot it
 * reads the metadata URL and the instance token out of the cloud-init the shim rendered, then
 * behaves like the simulator's machines (shims/simulator/machine.ts); stopped or terminated, its
 * runner goes with it.
 */
import { bootRunner, type SimulatedRunner, type SimulatorConfig, stopRunner } from "../shims/simulator/machine.ts";
import { createAccount, type Ec2Faults, type FakeEc2Account, type FakeInstance } from "../test/fake-ec2/control.ts";
import { type FakeEc2, startFakeEc2 } from "../test/fake-ec2/server.ts";
import { readBootstrap } from "../test/fake-ec2/user-data-reader.ts";
import { type Ec2ShimWorker, startEc2Shim } from "./ec2-shim.ts";

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
