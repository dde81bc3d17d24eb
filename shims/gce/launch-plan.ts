import type { ExtraSpecs } from "./extra-specs.ts";
import { type ProvisioningModel, regionOf } from "./instance-body.ts";

/**
 * Which inserts one create may try, in order: every zone with Spot first when the scale set
 * asks for Spot (then, with spot-with-fallback, every zone on standard), and which failures
 * mean "try the next one". Pure.
 */

export interface LaunchAttempt {
  zone: string;
  model: ProvisioningModel;
}

export interface FailedAttempt {
  attempt: LaunchAttempt;
  /** GCE's operation error code or HTTP reason. */
  code: string;
}

export const MAX_LAUNCH_ATTEMPTS = 12;

export function launchPlan(zones: string[], specs: ExtraSpecs): LaunchAttempt[] {
  const models: ProvisioningModel[] =
    specs.capacity === "spot" ? ["SPOT"] : specs.capacity === "spot-with-fallback" ? ["SPOT", "STANDARD"] : ["STANDARD"];
  return models.flatMap((model) => zones.map((zone) => ({ zone, model })));
}

/**
 * Out of capacity in that zone (for that model), or over a quota another zone or model may
 * not be: GCE reports both on the insert's operation (ZONE_RESOURCE_POOL_EXHAUSTED*,
 * QUOTA_EXCEEDED) and quota sometimes on the HTTP answer (403 quotaExceeded).
 */
const CAPACITY_CODES = new Set([
  "ZONE_RESOURCE_POOL_EXHAUSTED",
  "ZONE_RESOURCE_POOL_EXHAUSTED_WITH_DETAILS",
  "QUOTA_EXCEEDED",
  "quotaExceeded",
  "RESOURCE_POOL_EXHAUSTED",
]);

export const isCapacityError = (code: string) => CAPACITY_CODES.has(code);

/** A quota is per region and model (CPUS, PREEMPTIBLE_CPUS): once over it, the region's other zones are too. */
export function ruledOut(a: LaunchAttempt, failures: FailedAttempt[]): boolean {
  return failures.some(
    (f) =>
      (f.code === "QUOTA_EXCEEDED" || f.code === "quotaExceeded") &&
      f.attempt.model === a.model &&
      regionOf(f.attempt.zone) === regionOf(a.zone),
  );
}

export const describeAttempt = (a: LaunchAttempt) => `${a.model === "SPOT" ? "spot" : "standard"} in ${a.zone}`;

/** One line per failed attempt, for the instance's fault: where it was tried and what GCE said. */
export const describeFailures = (failures: FailedAttempt[]) => failures.map((f) => `${describeAttempt(f.attempt)}: ${f.code}`).join("; ");
