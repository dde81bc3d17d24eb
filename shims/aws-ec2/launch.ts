import type { Ec2Api, Ec2Error } from "./ec2-api.ts";
import { describeImagesParams, describeInstancesParams, type RootVolume, runInstancesParams, type Tag } from "./ec2-params.ts";
import { type Ec2Instance, parseDescribeImages, parseDescribeInstances, parseRunInstances } from "./ec2-xml.ts";
import { type ExtraSpecs, TAG_CONTROLLER, TAG_NAME, TAG_POOL } from "./extra-specs.ts";
import { findInstance, type PoolScope } from "./instances.ts";
import { type FailedAttempt, isCapacityError, type LaunchAttempt, launchPlan, MAX_LAUNCH_ATTEMPTS, ruledOut } from "./launch-plan.ts";

/**
 * Launching one runner machine: find it if an earlier create already made it, else walk the
 * launch plan (instance types × subnets × markets) with RunInstances until one has capacity.
 * Independent of HTTP: a batch create would run this once per machine.
 *
 * Idempotency: each attempt's ClientToken is derived from the instance name and the attempt,
 * so a create the coordinator retries (its answer lost) repeats the same calls with the same
 * tokens and EC2 answers with the machine it already started instead of a second one. The
 * retried create carries a fresh instance token, so its user data differs: EC2 then says
 * IdempotentParameterMismatch, and the machine is looked up by its client token.
 */

export interface LaunchRequest {
  name: string;
  imageId: string;
  flavor: string;
  specs: ExtraSpecs;
  scope: PoolScope;
  /** base64 user data. */
  userData: string;
  /** Stop trying further attempts after this time (unix ms). */
  deadline: number;
  maxAttempts?: number;
}

export type LaunchOutcome =
  /** The pool already had a machine of this name (a retried create). */
  | { kind: "existing"; instance: Ec2Instance }
  | { kind: "launched"; instance: Ec2Instance; attempt: LaunchAttempt; failures: FailedAttempt[] }
  /** Every attempt allowed hit a capacity error; `untried` were left for time or the attempt cap. */
  | { kind: "no_capacity"; failures: FailedAttempt[]; untried: number }
  /** The name belongs to a machine of another pool or coordinator. */
  | { kind: "taken"; instance: Ec2Instance }
  | { kind: "failed"; action: string; error: Ec2Error; failures: FailedAttempt[] };

const encoder = new TextEncoder();

/** 64 hex characters (EC2's maximum token length) from the name and the attempt. */
export async function clientToken(name: string, a: LaunchAttempt): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", encoder.encode([name, a.instanceType, a.subnetId ?? "", a.market].join("\n")));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

export function launchTags(r: Pick<LaunchRequest, "name" | "scope" | "specs">): Tag[] {
  return [
    { key: TAG_NAME, value: r.name },
    { key: TAG_CONTROLLER, value: r.scope.controllerId },
    { key: TAG_POOL, value: r.scope.poolId },
    ...Object.entries(r.specs.tags ?? {}).map(([key, value]) => ({ key, value })),
  ];
}

const wantsRootVolume = (s: ExtraSpecs) =>
  s.root_volume_size_gb !== undefined ||
  s.root_volume_type !== undefined ||
  s.root_volume_iops !== undefined ||
  s.root_volume_throughput !== undefined;

/** The root volume mapping needs the AMI's root device name (it differs between AMIs: /dev/xvda, /dev/sda1). */
async function rootVolume(
  ec2: Ec2Api,
  r: LaunchRequest,
): Promise<{ ok: true; value: RootVolume | undefined } | { ok: false; error: Ec2Error }> {
  if (!wantsRootVolume(r.specs)) return { ok: true, value: undefined };
  const res = await ec2.call("DescribeImages", describeImagesParams([r.imageId]));
  if (!res.ok) return res;
  const deviceName = parseDescribeImages(res.doc)[0]?.rootDeviceName;
  if (!deviceName)
    return { ok: false, error: { code: "InvalidAMIID.NotFound", message: `no root device name for ${r.imageId}`, status: 400 } };
  return {
    ok: true,
    value: {
      deviceName,
      sizeGb: r.specs.root_volume_size_gb,
      type: r.specs.root_volume_type,
      iops: r.specs.root_volume_iops,
      throughput: r.specs.root_volume_throughput,
    },
  };
}

const profile = (p: string | undefined) => (p === undefined ? undefined : p.startsWith("arn:") ? { arn: p } : { name: p });

export async function launch(ec2: Ec2Api, r: LaunchRequest, now: () => number = Date.now): Promise<LaunchOutcome> {
  const failures: FailedAttempt[] = [];
  const existing = await findInstance(ec2, r.scope, r.name);
  if (!existing.ok) return { kind: "failed", action: "DescribeInstances", error: existing.error, failures };
  if (existing.value) return { kind: "existing", instance: existing.value };

  const root = await rootVolume(ec2, r);
  if (!root.ok) return { kind: "failed", action: "DescribeImages", error: root.error, failures };

  const plan = launchPlan(r.flavor, r.specs);
  const maxAttempts = r.maxAttempts ?? MAX_LAUNCH_ATTEMPTS;
  let made = 0;
  for (const [i, attempt] of plan.entries()) {
    if (ruledOut(attempt, failures)) continue;
    if (made >= maxAttempts || now() >= r.deadline) {
      return { kind: "no_capacity", failures, untried: plan.slice(i).filter((a) => !ruledOut(a, failures)).length };
    }
    made++;
    const token = await clientToken(r.name, attempt);
    const res = await ec2.call(
      "RunInstances",
      runInstancesParams({
        imageId: r.imageId,
        instanceType: attempt.instanceType,
        subnetId: attempt.subnetId,
        securityGroupIds: r.specs.security_group_ids ?? [],
        clientToken: token,
        userData: r.userData,
        tags: launchTags(r),
        market: attempt.market,
        spotMaxPrice: r.specs.spot_max_price,
        keyName: r.specs.key_name,
        iamInstanceProfile: profile(r.specs.iam_instance_profile),
        launchTemplate: r.specs.launch_template,
        rootVolume: root.value,
      }),
    );
    if (res.ok) {
      const instance = parseRunInstances(res.doc)[0];
      if (!instance)
        return {
          kind: "failed",
          action: "RunInstances",
          error: { code: "MalformedResponse", message: "RunInstances answered no instance", status: 200 },
          failures,
        };
      return { kind: "launched", instance, attempt, failures };
    }
    if (res.error.code === "IdempotentParameterMismatch") return byClientToken(ec2, r, token, res.error, failures);
    if (!isCapacityError(res.error.code)) return { kind: "failed", action: "RunInstances", error: res.error, failures };
    failures.push({ attempt, code: res.error.code });
  }
  return { kind: "no_capacity", failures, untried: 0 };
}

/** An earlier create of this name already used this token: that machine is the answer (or another pool's, then the name is taken). */
async function byClientToken(
  ec2: Ec2Api,
  r: LaunchRequest,
  token: string,
  mismatch: Ec2Error,
  failures: FailedAttempt[],
): Promise<LaunchOutcome> {
  const res = await ec2.call("DescribeInstances", describeInstancesParams({ filters: [{ name: "client-token", values: [token] }] }));
  if (!res.ok) return { kind: "failed", action: "DescribeInstances", error: res.error, failures };
  const instance = parseDescribeInstances(res.doc).instances[0];
  if (!instance) return { kind: "failed", action: "RunInstances", error: mismatch, failures };
  const ours = instance.tags[TAG_POOL] === r.scope.poolId && instance.tags[TAG_CONTROLLER] === r.scope.controllerId;
  if (!ours) return { kind: "taken", instance };
  if (instance.state === "terminated" || instance.state === "shutting-down") {
    return {
      kind: "failed",
      action: "RunInstances",
      error: {
        code: "IdempotentParameterMismatch",
        message: `${r.name} was launched before as ${instance.instanceId}, which is ${instance.state}`,
        status: 400,
      },
      failures,
    };
  }
  return { kind: "existing", instance };
}
