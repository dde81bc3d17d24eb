import type { ExtraSpecs } from "./extra-specs.ts";
import type { GceApi, GceError } from "./gce-api.ts";
import { insertBody } from "./instance-body.ts";
import { aggregated, type GceInstance, ours, type PoolScope } from "./instances.ts";
import { type FailedAttempt, isCapacityError, type LaunchAttempt, launchPlan, MAX_LAUNCH_ATTEMPTS, ruledOut } from "./launch-plan.ts";

/**
 * Launching one runner machine: find it if an earlier create already made it, else walk the
 * launch plan (zones × Spot/standard) with instances.insert until one has capacity. GCE answers
 * an insert with an Operation and reports capacity and quota on it when it is DONE, so each
 * attempt waits on zoneOperations.wait (GCE holds that call up to two minutes) within the
 * create's deadline.
 *
 * Idempotency: the instance name is the key. A create the coordinator retries finds the
 * machine by name (aggregatedList, any zone); an insert racing another gets 409 alreadyExists
 * and the machine is read back.
 */

export interface LaunchRequest {
  name: string;
  image: string;
  machineType: string;
  zones: string[];
  specs: ExtraSpecs;
  scope: PoolScope;
  startupScript: string;
  /** Stop trying further attempts after this time (unix ms). */
  deadline: number;
}

export type LaunchOutcome =
  | { kind: "existing"; instance: GceInstance }
  | { kind: "launched"; instance: GceInstance; attempt: LaunchAttempt; failures: FailedAttempt[] }
  | { kind: "no_capacity"; failures: FailedAttempt[]; untried: number }
  | { kind: "taken"; instance: GceInstance }
  | { kind: "failed"; error: GceError; failures: FailedAttempt[] };

const byName = (name: string) => `(name = "${name}")`;
const MAX_WAIT_MS = 60_000;

async function readBack(
  gce: GceApi,
  r: LaunchRequest,
  zone: string,
): Promise<{ ok: true; value: GceInstance } | { ok: false; error: GceError }> {
  const g = await gce.call({
    method: "compute.instances.get",
    http: "GET",
    path: `projects/${r.scope.project}/zones/${zone}/instances/${r.name}`,
  });
  return g.ok ? { ok: true, value: g.value as GceInstance } : g;
}

export async function launch(gce: GceApi, r: LaunchRequest, now: () => number = Date.now): Promise<LaunchOutcome> {
  const failures: FailedAttempt[] = [];
  // Any instance of this name, ours or not: the name is what GCE keys on.
  const existing = await aggregated(gce, r.scope.project, byName(r.name));
  if (!existing.ok) return { kind: "failed", error: existing.error, failures };
  const first = existing.value[0];
  if (first) return ours(first, r.scope) ? { kind: "existing", instance: first } : { kind: "taken", instance: first };

  const plan = launchPlan(r.zones, r.specs);
  const attempted = new Set<LaunchAttempt>();
  for (const attempt of plan) {
    if (ruledOut(attempt, failures)) continue;
    if (attempted.size >= MAX_LAUNCH_ATTEMPTS || now() >= r.deadline) break;
    attempted.add(attempt);
    const base = `projects/${r.scope.project}/zones/${attempt.zone}`;
    const ins = await gce.call({
      method: "compute.instances.insert",
      http: "POST",
      path: `${base}/instances`,
      body: insertBody({
        name: r.name,
        zone: attempt.zone,
        machineType: r.machineType,
        image: r.image,
        specs: r.specs,
        poolLabel: r.scope.poolLabel,
        controllerLabel: r.scope.controllerLabel,
        startupScript: r.startupScript,
        model: attempt.model,
      }),
    });
    if (!ins.ok) {
      if (ins.error.reason === "alreadyExists") {
        const back = await readBack(gce, r, attempt.zone);
        if (!back.ok) return { kind: "failed", error: back.error, failures };
        return ours(back.value, r.scope) ? { kind: "existing", instance: back.value } : { kind: "taken", instance: back.value };
      }
      if (isCapacityError(ins.error.reason)) {
        failures.push({ attempt, code: ins.error.reason });
        continue;
      }
      return { kind: "failed", error: ins.error, failures };
    }
    let op = ins.value as {
      name: string;
      status: string;
      error?: { errors?: { code?: string; message?: string }[] };
      httpErrorStatusCode?: number;
    };
    while (op.status !== "DONE" && now() < r.deadline) {
      const w = await gce.call({
        method: "compute.zoneOperations.wait",
        http: "POST",
        path: `${base}/operations/${op.name}/wait`,
        timeoutMs: Math.max(1000, Math.min(MAX_WAIT_MS, r.deadline - now())),
      });
      if (!w.ok) {
        // The wait was cut at the deadline: the insert still runs, and the machine is read back below.
        if (now() >= r.deadline) break;
        // Lost track of the operation: the coordinator retries the create, which finds the machine by name if it was made.
        return { kind: "failed", error: w.error, failures };
      }
      op = w.value;
    }
    const err = op.status === "DONE" ? op.error?.errors?.[0] : undefined;
    if (err) {
      const code = String(err.code ?? "UNKNOWN");
      if (isCapacityError(code)) {
        failures.push({ attempt, code });
        continue;
      }
      return {
        kind: "failed",
        error: {
          reason: code,
          message: String(err.message ?? ""),
          status: op.httpErrorStatusCode ?? 400,
          method: "compute.instances.insert",
        },
        failures,
      };
    }
    // DONE, or still going at the deadline: the machine exists (PROVISIONING); if GCE gives up on it later, the coordinator sees it gone.
    const back = await readBack(gce, r, attempt.zone);
    if (!back.ok) return { kind: "failed", error: back.error, failures };
    return { kind: "launched", instance: back.value, attempt, failures };
  }
  return { kind: "no_capacity", failures, untried: plan.filter((a) => !attempted.has(a) && !ruledOut(a, failures)).length };
}
