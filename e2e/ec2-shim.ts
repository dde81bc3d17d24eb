/**
 * The EC2 shim Worker (shims/aws-ec2) under `wrangler dev` (shim-worker-dev.ts), pointed at a
 * fake EC2 account. Used by the EC2 end-to-end scenario and the conformance runs.
 */
import type { Ec2Account } from "../test/fake-ec2/types.ts";
import { type ShimWorkerDev, startShimWorkerDev } from "./shim-worker-dev.ts";

export type Ec2ShimWorker = ShimWorkerDev;

export function startEc2Shim(opts: {
  endpoint: string;
  account: Ec2Account;
  secret: string;
  vars?: Record<string, string>;
  log?: string;
}): Promise<Ec2ShimWorker> {
  return startShimWorkerDev({
    dir: "aws-ec2",
    label: "the EC2 shim",
    secret: opts.secret,
    log: opts.log,
    vars: {
      AWS_ACCESS_KEY_ID: opts.account.access_key_id,
      AWS_SECRET_ACCESS_KEY: opts.account.secret_access_key,
      AWS_REGION: opts.account.region,
      EC2_ENDPOINT: opts.endpoint,
      ...opts.vars,
    },
  });
}
