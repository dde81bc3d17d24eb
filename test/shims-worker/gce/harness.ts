/// <reference path="../../fake-gce/provided-context.d.ts" />
import { inject } from "vitest";
import type { ShimEnv } from "../../../shims/gce/config";
import worker from "../../../shims/gce/worker";
import type { BootstrapInstance } from "../../../src/providers/shim-protocol";
import { createProject, type FakeGceProject, type GceProjectConfig } from "../../fake-gce/control";
import { bootstrapFor, type CallOptions as SignedCallOptions, signedCaller } from "../signed-caller";

/**
 * The GCE shim Worker, run inside workerd, against the fake Compute Engine (started in Node by
 * this project's globalSetup): each test file gets a project (and service account key) of its
 * own, and calls the Worker's fetch handler with signed requests as the coordinator sends them.
 */

export { CONTROLLER, faultText, OTHER_POOL, POOL } from "../signed-caller";

export const SECRET = "gce-shim-test-secret-0123456789";
export const IMAGE = "projects/debian-cloud/global/images/family/debian-12";
export const BASE = "https://gce-shim.example.test";

export interface ShimWorld {
  project: FakeGceProject;
  env: ShimEnv;
  call(method: string, path: string, opts?: CallOptions): Promise<{ status: number; body: any; headers: Headers }>;
}

export type CallOptions = SignedCallOptions<ShimEnv>;

export async function shimWorld(config: GceProjectConfig = {}): Promise<ShimWorld> {
  const project = await createProject(inject("fakeGceUrl"), {
    config: { boot_delay_ms: 20, stop_delay_ms: 20, operation_ms: 10, ...config },
  });
  const env: ShimEnv = {
    SHIM_SECRET: SECRET,
    GCE_SERVICE_ACCOUNT_KEY: JSON.stringify(project.service_account_key),
    GCE_ZONES: "us-central1-a,us-central1-b",
    GCE_ENDPOINT: project.endpoint,
  };
  return {
    project,
    env,
    call: signedCaller(worker, env, BASE, SECRET),
  };
}

/** A BootstrapInstance for the GCE shim: an image family, a flavor that is a machine type. */
export const bootstrap = (over: Partial<BootstrapInstance> = {}): BootstrapInstance =>
  bootstrapFor("gce", { flavor: "e2-standard-2", image: IMAGE }, over);

/** The inserts the project received: where, which model, and what GCE said (HTTP reason or the operation's code). */
export async function inserts(project: FakeGceProject) {
  const reqs = await project.requests();
  return reqs
    .filter((r) => r.method === "compute.instances.insert")
    .map((r) => ({
      zone: r.zone,
      model: (r.body as { scheduling?: { provisioningModel?: string } })?.scheduling?.provisioningModel ?? null,
      error: r.error,
    }));
}
