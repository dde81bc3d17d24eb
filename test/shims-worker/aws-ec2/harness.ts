/// <reference path="../../fake-ec2/provided-context.d.ts" />
import { inject } from "vitest";
import type { ShimEnv } from "../../../shims/aws-ec2/config";
import worker from "../../../shims/aws-ec2/worker";
import type { BootstrapInstance, ProviderInstance } from "../../../src/providers/shim-protocol";
import { signRequest } from "../../../src/providers/shim-signing";
import { createAccount, type Ec2AccountConfig, type FakeEc2Account } from "../../fake-ec2/control";

/**
 * The EC2 shim Worker, run inside workerd, against the fake EC2 (started in Node by this
 * project's globalSetup): each test file gets an account of its own, and calls the Worker's
 * fetch handler with signed requests exactly as the coordinator sends them.
 */

export const SECRET = "ec2-shim-test-secret-0123456789";
export const CONTROLLER = "5a3f8e1c-2b7d-4c1e-9f0a-6d4b3c2a1e0f";
export const POOL = "0f0c2a4e-8a4b-4f6e-9d55-2b8c1b1f5b1e";
export const OTHER_POOL = "7d1e6a3b-0000-4000-8000-00000000beef";
export const AMI = "ami-0123456789abcdef0";
export const BASE = "https://ec2-shim.example.test";

export interface ShimWorld {
  account: FakeEc2Account;
  env: ShimEnv;
  call(method: string, path: string, opts?: CallOptions): Promise<{ status: number; body: any; headers: Headers }>;
}

export interface CallOptions {
  body?: unknown;
  /** A raw body, sent as is. */
  raw?: string;
  pool?: string;
  controller?: string;
  specs?: unknown;
  secret?: string;
  /** Replaces or drops (undefined) headers. */
  headers?: Record<string, string | undefined>;
  env?: Partial<ShimEnv>;
}

const b64 = (v: unknown) => btoa(String.fromCharCode(...new TextEncoder().encode(JSON.stringify(v))));

export async function shimWorld(config: Ec2AccountConfig = {}): Promise<ShimWorld> {
  const account = await createAccount(inject("fakeEc2Url"), { config: { boot_delay_ms: 20, stop_delay_ms: 20, ...config } });
  const env: ShimEnv = {
    SHIM_SECRET: SECRET,
    AWS_ACCESS_KEY_ID: account.access_key_id,
    AWS_SECRET_ACCESS_KEY: account.secret_access_key,
    AWS_REGION: account.region,
    EC2_ENDPOINT: account.endpoint,
  };
  return {
    account,
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
/** A BootstrapInstance for the EC2 shim: an AMI image, a flavor that is an instance type. */
export function bootstrap(over: Partial<BootstrapInstance> = {}): BootstrapInstance {
  return {
    name: `edgerunner-ec2-${Date.now().toString(36)}-${n++}`,
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
    flavor: "c5.large",
    image: AMI,
    pool_id: POOL,
    labels: null,
    user_data_options: { disable_updates_on_boot: true, extra_packages: null, enable_boot_debug: false },
    jit_config_enabled: true,
    ...over,
  };
}

export const faultText = (p: ProviderInstance) =>
  p.provider_fault ? new TextDecoder().decode(Uint8Array.from(atob(p.provider_fault), (c) => c.charCodeAt(0))) : null;

/** The RunInstances calls the account received: what was asked, and what EC2 said. */
export async function launches(account: FakeEc2Account) {
  return (await account.requests())
    .filter((r) => r.action === "RunInstances")
    .map((r) => ({
      type: r.params.InstanceType,
      subnet: r.params.SubnetId ?? null,
      market: r.params["InstanceMarketOptions.MarketType"] === "spot" ? "spot" : "on-demand",
      token: r.params.ClientToken,
      error: r.error_code,
    }));
}
