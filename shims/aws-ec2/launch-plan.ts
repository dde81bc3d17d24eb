import type { ExtraSpecs } from "./extra-specs.ts";

/**
 * Which launches to try for one machine, in order, and which failures move on to the next one.
 * Pure: the create loop (launch.ts) walks the plan against EC2.
 *
 * Order: by market (spot first with spot-with-fallback), then by instance type (the flavor, then
 * instance_types, as listed), then by subnet. Types are the user's preference and subnets are
 * usually one per availability zone, so the preferred type is tried in every zone before the next.
 */

export type Market = "on-demand" | "spot";

export interface LaunchAttempt {
  instanceType: string;
  /** null: EC2 picks the default subnet of the default VPC. */
  subnetId: string | null;
  market: Market;
}

export interface FailedAttempt {
  attempt: LaunchAttempt;
  code: string;
}

/** Bounds the EC2 calls one create can make (Workers cap subrequests per invocation). */
export const MAX_LAUNCH_ATTEMPTS = 24;

export function launchPlan(flavor: string, specs: Pick<ExtraSpecs, "instance_types" | "subnet_ids" | "capacity">): LaunchAttempt[] {
  const types = [...new Set([flavor, ...(specs.instance_types ?? [])].filter((t) => t !== ""))];
  const subnets: (string | null)[] = specs.subnet_ids?.length ? specs.subnet_ids : [null];
  const markets: Market[] =
    specs.capacity === "spot" ? ["spot"] : specs.capacity === "spot-with-fallback" ? ["spot", "on-demand"] : ["on-demand"];
  const plan: LaunchAttempt[] = [];
  for (const market of markets)
    for (const instanceType of types) for (const subnetId of subnets) plan.push({ instanceType, subnetId, market });
  return plan;
}

/**
 * EC2 errors that mean "not this type, zone, subnet or market right now": the next attempt may
 * work. Anything else (bad AMI, permissions, throttling) would fail every attempt the same way.
 */
const CAPACITY_CODES = new Set([
  "InsufficientInstanceCapacity",
  "InsufficientCapacity",
  "InsufficientHostCapacity",
  "InsufficientReservedInstanceCapacity",
  "InsufficientFreeAddressesInSubnet",
  // The type is not offered in that zone, or not as spot.
  "Unsupported",
  "SpotMaxPriceTooLow",
  "MaxSpotInstanceCountExceeded",
  // Quotas are per family group and market: another type or market may still fit.
  "VcpuLimitExceeded",
  "InstanceLimitExceeded",
]);

export const isCapacityError = (code: string) => CAPACITY_CODES.has(code);

/** Whether an earlier failure already rules this attempt out (a full subnet, the account's spot limit). */
export function ruledOut(a: LaunchAttempt, failures: FailedAttempt[]): boolean {
  return failures.some(
    (f) =>
      (f.code === "InsufficientFreeAddressesInSubnet" && a.subnetId !== null && f.attempt.subnetId === a.subnetId) ||
      (f.code === "MaxSpotInstanceCountExceeded" && a.market === "spot"),
  );
}

export const describeAttempt = (a: LaunchAttempt) => `${a.instanceType} ${a.market}${a.subnetId ? ` in ${a.subnetId}` : ""}`;

/** One line per failed attempt, for the instance's fault: what was tried and what EC2 said. */
export const describeFailures = (failures: FailedAttempt[]) => failures.map((f) => `${describeAttempt(f.attempt)}: ${f.code}`).join("; ");
