import type { BootstrapInstance, ProviderInstance } from "../../src/providers/shim-protocol";
import { signRequest } from "../../src/providers/shim-signing";

/**
 * What every cloud shim's workerd harness shares: calling the Worker's fetch handler with signed
 * requests exactly as the coordinator sends them, and a BootstrapInstance to create.
 */

export const CONTROLLER = "5a3f8e1c-2b7d-4c1e-9f0a-6d4b3c2a1e0f";
export const POOL = "0f0c2a4e-8a4b-4f6e-9d55-2b8c1b1f5b1e";
export const OTHER_POOL = "7d1e6a3b-0000-4000-8000-00000000beef";

export interface CallOptions<E> {
  body?: unknown;
  /** A raw body, sent as is. */
  raw?: string;
  pool?: string;
  controller?: string;
  specs?: unknown;
  secret?: string;
  /** Replaces or drops (undefined) headers. */
  headers?: Record<string, string | undefined>;
  env?: Partial<E>;
}

export type ShimCall<E> = (method: string, path: string, opts?: CallOptions<E>) => Promise<{ status: number; body: any; headers: Headers }>;

const b64 = (v: unknown) => btoa(String.fromCharCode(...new TextEncoder().encode(JSON.stringify(v))));

/** Calls `worker` at `base` as the coordinator would, signed with `secret` unless told otherwise. */
export function signedCaller<E>(
  worker: { fetch(request: Request, env: E): Promise<Response> },
  env: E,
  base: string,
  secret: string,
): ShimCall<E> {
  return async (method, path, opts = {}) => {
    const body = opts.raw ?? (opts.body === undefined ? "" : JSON.stringify(opts.body));
    const url = `${base}${path}`;
    const signed = await signRequest(opts.secret ?? secret, { method, pathWithQuery: new URL(url).pathname, body });
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
  };
}

let n = 0;
/** A BootstrapInstance for a cloud shim, with a fresh name and instance token. */
export function bootstrapFor(
  cloud: string,
  defaults: { flavor: string; image: string },
  over: Partial<BootstrapInstance> = {},
): BootstrapInstance {
  n++;
  return {
    name: `edgerunner-${cloud}-${Date.now().toString(36)}-${n}`,
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
    ...defaults,
    pool_id: POOL,
    labels: null,
    user_data_options: { disable_updates_on_boot: true, extra_packages: null, enable_boot_debug: false },
    jit_config_enabled: true,
    ...over,
  };
}

/** A machine's provider_fault (base64 text), decoded. */
export const faultText = (p: ProviderInstance) =>
  p.provider_fault ? new TextDecoder().decode(Uint8Array.from(atob(p.provider_fault), (c) => c.charCodeAt(0))) : null;
