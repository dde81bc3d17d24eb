/// <reference path="../../fake-ec2/provided-context.d.ts" />
import { inject } from "vitest";
import type { ShimEnv } from "../../../shims/aws-ec2/config";
import worker from "../../../shims/aws-ec2/worker";
import type { BootstrapInstance } from "../../../src/providers/shim-protocol";
import { createAccount, type Ec2AccountConfig, type FakeEc2Account } from "../../fake-ec2/control";
import { bootstrapFor, type CallOptions as SignedCallOptions, signedCaller } from "../signed-caller";

/**
 * The EC2 shim Worker, run inside workerd, against the fake EC2 (started in Node by this
 * project's globalSetup): each test file gets an account of its own, and calls the Worker's
 * fetch handler with signed requests exactly as the coordinator sends them.
 */

export { CONTROLLER, faultText, OTHER_POOL, POOL } from "../signed-caller";

export const SECRET = "ec2-shim-test-secret-0123456789";
export const AMI = "ami-0123456789abcdef0";
export const BASE = "https://ec2-shim.example.test";

export interface ShimWorld {
  account: FakeEc2Account;
  env: ShimEnv;
  call(method: string, path: string, opts?: CallOptions): Promise<{ status: number; body: any; headers: Headers }>;
}

export type CallOptions = SignedCallOptions<ShimEnv>;

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
    call: signedCaller(worker, env, BASE, SECRET),
  };
}

/** A BootstrapInstance for the EC2 shim: an AMI image, a flavor that is an instance type. */
export const bootstrap = (over: Partial<BootstrapInstance> = {}): BootstrapInstance =>
  bootstrapFor("ec2", { flavor: "c5.large", image: AMI }, over);

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
