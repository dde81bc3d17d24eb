import type { ExtraSpecs } from "./extra-specs.ts";

/**
 * Which creates to try for one server, in order. Pure: the create loop (launch.ts) walks the
 * plan against Hetzner.
 *
 * Order: by server type (the flavor, then server_types, as listed), then by location. Types
 * are the user's preference of machine; the preferred type is tried in every location before
 * the next type, as the EC2 shim tries a type in every subnet.
 */

export interface LaunchAttempt {
  serverType: string;
  /** null: Hetzner picks the location. */
  location: string | null;
}

export interface FailedAttempt {
  attempt: LaunchAttempt;
  code: string;
}

/** Bounds the Hetzner calls one create can make (Workers cap subrequests per invocation). */
export const MAX_LAUNCH_ATTEMPTS = 12;

export function launchPlan(flavor: string, specs: Pick<ExtraSpecs, "server_types" | "locations">): LaunchAttempt[] {
  const types = [...new Set([flavor, ...(specs.server_types ?? [])].filter((t) => t !== ""))];
  const locations: (string | null)[] = specs.locations?.length ? specs.locations : [null];
  const plan: LaunchAttempt[] = [];
  for (const serverType of types) for (const location of locations) plan.push({ serverType, location });
  return plan;
}

/** A project limit (servers, cores, IPs) holds whatever the location: only a smaller type may still fit. */
export const ruledOut = (a: LaunchAttempt, failures: FailedAttempt[]) =>
  failures.some((f) => f.code === "resource_limit_exceeded" && f.attempt.serverType === a.serverType);

export const describeAttempt = (a: LaunchAttempt) => `${a.serverType} in ${a.location ?? "any location"}`;

export const describeFailures = (failures: FailedAttempt[]) => failures.map((f) => `${describeAttempt(f.attempt)}: ${f.code}`).join("; ");
