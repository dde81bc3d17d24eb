/**
 * The Hetzner shim Worker (shims/hetzner) under `wrangler dev` (shim-worker-dev.ts), pointed at
 * a fake Hetzner Cloud project. Used by the HETZNER end-to-end scenario and the conformance runs.
 */
import type { HetznerProject } from "../test/fake-hetzner/types.ts";
import { type ShimWorkerDev, startShimWorkerDev } from "./shim-worker-dev.ts";

export type HetznerShimWorker = ShimWorkerDev;

export function startHetznerShim(opts: {
  /** The fake's API base (…/v1). */
  endpoint: string;
  project: HetznerProject;
  secret: string;
  vars?: Record<string, string>;
  log?: string;
}): Promise<HetznerShimWorker> {
  return startShimWorkerDev({
    dir: "hetzner",
    label: "the Hetzner shim",
    secret: opts.secret,
    log: opts.log,
    vars: { HCLOUD_TOKEN: opts.project.token, HCLOUD_ENDPOINT: opts.endpoint, ...opts.vars },
  });
}
