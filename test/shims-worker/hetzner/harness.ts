/// <reference path="../../fake-hetzner/provided-context.d.ts" />
import { inject } from "vitest";
import type { ShimEnv } from "../../../shims/hetzner/config";
import worker from "../../../shims/hetzner/worker";
import type { BootstrapInstance } from "../../../src/providers/shim-protocol";
import { createProject, type FakeHetznerProject, type HetznerProjectConfig } from "../../fake-hetzner/control";
import { bootstrapFor, type CallOptions as SignedCallOptions, signedCaller } from "../signed-caller";

/**
 * The Hetzner shim Worker, run inside workerd, against the fake Hetzner Cloud (started in Node
 * by this project's globalSetup): each test file gets a project of its own, and calls the
 * Worker's fetch handler with signed requests exactly as the coordinator sends them.
 */

export { CONTROLLER, faultText, OTHER_POOL, POOL } from "../signed-caller";

export const SECRET = "hetzner-shim-test-secret-0123456789";
export const BASE = "https://hetzner-shim.example.test";

export interface ShimWorld {
  project: FakeHetznerProject;
  env: ShimEnv;
  call(method: string, path: string, opts?: CallOptions): Promise<{ status: number; body: any; headers: Headers }>;
}

export type CallOptions = SignedCallOptions<ShimEnv>;

export async function shimWorld(config: HetznerProjectConfig = {}): Promise<ShimWorld> {
  const project = await createProject(inject("fakeHetznerUrl"), { config: { boot_delay_ms: 20, stop_delay_ms: 20, ...config } });
  const env: ShimEnv = { SHIM_SECRET: SECRET, HCLOUD_TOKEN: project.token, HCLOUD_ENDPOINT: project.endpoint };
  return {
    project,
    env,
    call: signedCaller(worker, env, BASE, SECRET),
  };
}

/** A BootstrapInstance for the Hetzner shim: an image name, a flavor that is a server type. */
export const bootstrap = (over: Partial<BootstrapInstance> = {}): BootstrapInstance =>
  bootstrapFor("hz", { flavor: "cx22", image: "ubuntu-24.04" }, over);

/** The POST /servers calls the project received: what was asked, and what Hetzner said. */
export async function creates(project: FakeHetznerProject) {
  return (await project.requests())
    .filter((r) => r.method === "POST" && r.path === "/servers")
    .map((r) => {
      const b = r.body as { server_type: string; location?: string; name: string };
      return { type: b.server_type, location: b.location ?? null, name: b.name, error: r.error_code };
    });
}
