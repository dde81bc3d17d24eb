import { type Coordinator, startCoordinator } from "../../bench/harness.mjs";
import { type FakeWorldSetup, fakeWorld } from "../../bench/harness-world.mjs";
import { type FakeGithub, startFakeGithub } from "../fake-github/server.ts";
import { type FakeShim, startFakeShim } from "../fake-shim/server.ts";

/** What the dashboard's browser tests run against: the fakes, the coordinator under `wrangler dev`, one scale set. */
export interface DashboardStack {
  github: FakeGithub;
  shim: FakeShim;
  coordinator: Coordinator;
  world: FakeWorldSetup;
  scaleSet: { id: string; name: string };
  stop(): Promise<void>;
}

/**
 * GitHub and a cloud played by the fakes, the coordinator with its periodic work slowed down (the
 * tests drive it), and a `linux-x64` scale set for `self-hosted, linux` on the repository, with
 * `scaleSet` fields of the test's own on top.
 */
export async function startDashboardStack(scaleSet: Record<string, unknown> = {}): Promise<DashboardStack> {
  const github = await startFakeGithub();
  const shim = await startFakeShim();
  const coordinator = await startCoordinator({
    RECONCILE_INTERVAL_SECONDS: "3600",
    NUDGE_DELAY_SECONDS: "0",
    ORPHAN_CHECK_SECONDS: "86400",
  });
  const stop = async () => {
    await coordinator.stop();
    await shim.stop();
    await github.close();
  };
  try {
    const world = await fakeWorld(coordinator, github.url, shim.url);
    const created = await coordinator.api("POST", `/repositories/${world.repo.id}/scalesets`, {
      name: "linux-x64",
      provider_name: world.provider,
      labels: ["self-hosted", "linux"],
      max_runners: 5,
      image: "ubuntu:24.04",
      flavor: "small",
      ...scaleSet,
    });
    return { github, shim, coordinator, world, scaleSet: created, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
