/// <reference path="../../fake-gce/provided-context.d.ts" />
import { inject } from "vitest";
import type { ShimEnv } from "../../../shims/gce/config";
import worker from "../../../shims/gce/worker";
import type { BootstrapInstance, ProviderInstance } from "../../../src/providers/shim-protocol";
import { signRequest } from "../../../src/providers/shim-signing";
import { createProject, type FakeGceProject, type GceProjectConfig } from "../../fake-gce/control";

/**
 * The GCE shim Worker, run inside workerd, against the fake Compute Engine (started in Node by
 * this project's globalSetup): each test file gets a project (and service account key) of its
 * own, and calls the Worker's fetch handler with signed requests as the coordinator sends them.
 */

export const SECRET = "gce-shim-test-secret-0123456789";
export const CONTROLLER = "5a3f8e1c-2b7d-4c1e-9f0a-6d4b3c2a1e0f";
export const POOL = "0f0c2a4e-8a4b-4f6e-9d55-2b8c1b1f5b1e";
export const OTHER_POOL = "7d1e6a3b-0000-4000-8000-00000000beef";
export const IMAGE = "projects/debian-cloud/global/images/family/debian-12";
export const BASE = "https://gce-shim.example.test";

export interface ShimWorld {
  project: FakeGceProject;
  env: ShimEnv;
  call(method: string, path: string, opts?: CallOptions): Promise<{ status: number; body: any; headers: Headers }>;
}

export interface CallOptions {
  body?: unknown;
  raw?: string;
  pool?: string;
  controller?: string;
  specs?: unknown;
  secret?: string;
  headers?: Record<string, string | undefined>;
  env?: Partial<ShimEnv>;
}

const b64 = (v: unknown) => btoa(String.fromCharCode(...new TextEncoder().encode(JSON.stringify(v))));

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
    async call(method, path, opts = {}) {
      const body = opts.raw ?? (opts.body === undefined ? "" : JSON.stringify(opts.body));
      const url = `${BASE}${path}`;
      const signed = await signRequest(opts.secret ?? SECRET, { method, pathWithQuery: new URL(url).pathname, body });
      const headers: Record<string, string> = {
        accept: "application/json",
        "X-Edgerunner-Controller-Id": opts.controller ?? CONTROLLER,
        "X-Edgerunner-Pool-Id": opts.pool ?? POOL,
        "X-Edgerunner-Pool-Extra-Specs": b64(opts.specs ?? {}),
        ...signed,
        ...(body ? { "content-type": "application/json" } : {}),
      };
      for (const [k, v] of Object.entries(opts.headers ?? {})) {
        if (v === undefined) delete headers[k];
        else headers[k] = v;
      }
      const res = await worker.fetch(new Request(url, { method, headers, body: body || undefined }), { ...env, ...opts.env });
      const text = await res.text();
      return { status: res.status, body: text ? JSON.parse(text) : null, headers: res.headers };
    },
  };
}

let n = 0;
/** A BootstrapInstance for the GCE shim: an image family, a flavor that is a machine type. */
export function bootstrap(over: Partial<BootstrapInstance> = {}): BootstrapInstance {
  return {
    name: `edgerunner-gce-${Date.now().toString(36)}-${n++}`,
    tools: [],
    repo_url: "https://github.com/octo/app",
    "callback-url": "https://edgerunner.example.com/api/v1/callbacks",
    "metadata-url": "https://edgerunner.example.com/api/v1/metadata",
    "instance-token": `token-${n}-${crypto.randomUUID()}`,
    "ssh-keys": null,
    extra_specs: {},
    "github-runner-group": "",
    "ca-cert-bundle": null,
    arch: "amd64",
    os_type: "linux",
    flavor: "e2-standard-2",
    image: IMAGE,
    pool_id: POOL,
    labels: null,
    user_data_options: { disable_updates_on_boot: true, extra_packages: null, enable_boot_debug: false },
    jit_config_enabled: true,
    ...over,
  };
}

export const faultText = (p: ProviderInstance) =>
  p.provider_fault ? new TextDecoder().decode(Uint8Array.from(atob(p.provider_fault), (c) => c.charCodeAt(0))) : null;

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
