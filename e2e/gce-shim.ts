/**
 * The GCE shim Worker (shims/gce) under `wrangler dev` (shim-worker-dev.ts), pointed at a fake
 * Compute Engine project. Used by the GCE end-to-end scenario and the conformance runs.
 */
import type { GceProject } from "../test/fake-gce/types.ts";
import { type ShimWorkerDev, startShimWorkerDev } from "./shim-worker-dev.ts";

export type GceShimWorker = ShimWorkerDev;

export function startGceShim(opts: {
  /** The fake's compute API root ({url}/compute/v1/). */
  endpoint: string;
  project: GceProject;
  secret: string;
  zones?: string[];
  vars?: Record<string, string>;
  log?: string;
}): Promise<GceShimWorker> {
  return startShimWorkerDev({
    dir: "gce",
    label: "the GCE shim",
    secret: opts.secret,
    log: opts.log,
    vars: {
      // Single-quoted in .dev.vars: the key file's JSON (with its \n escapes) is taken literally.
      GCE_SERVICE_ACCOUNT_KEY: `'${JSON.stringify(opts.project.service_account_key)}'`,
      GCE_ENDPOINT: opts.endpoint,
      GCE_ZONES: (opts.zones ?? ["us-central1-a", "us-central1-b", "us-central1-c"]).join(","),
      ...opts.vars,
    },
  });
}
