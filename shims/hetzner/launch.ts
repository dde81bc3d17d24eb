import { isCapacityError } from "./errors.ts";
import { type ExtraSpecs, LABEL_CONTROLLER, LABEL_POOL } from "./extra-specs.ts";
import type { HcloudApi, HcloudError } from "./hcloud-api.ts";
import { type FailedAttempt, type LaunchAttempt, launchPlan, MAX_LAUNCH_ATTEMPTS, ruledOut } from "./launch-plan.ts";
import { type HcloudServer, inPool, type PoolScope, serverByName } from "./servers.ts";

/**
 * Creating one runner server: walk the launch plan (server types × locations) with
 * `POST /servers` until one has room, then wait for the create action to finish. Independent of
 * HTTP.
 *
 * Idempotency: server names are unique per Hetzner project, so a create the coordinator
 * retries (its answer lost) is refused with uniqueness_error; the server of that name is then
 * the answer when it carries this pool's labels, and the name is taken when it does not.
 */

export interface LaunchRequest {
  name: string;
  image: string;
  flavor: string;
  specs: ExtraSpecs;
  scope: PoolScope;
  userData: string;
  /** Stop trying further attempts, and stop waiting for the create action, at this time (unix ms). */
  deadline: number;
  maxAttempts?: number;
}

interface Action {
  id: number;
  status: "running" | "success" | "error";
  error: { code: string; message: string } | null;
}

export type LaunchOutcome =
  /** The project already had this pool's server of this name (a retried create). */
  | { kind: "existing"; server: HcloudServer }
  | { kind: "launched"; server: HcloudServer; attempt: LaunchAttempt; failures: FailedAttempt[] }
  /** Every attempt allowed hit a capacity error; `untried` were left for time or the attempt cap. */
  | { kind: "no_capacity"; failures: FailedAttempt[]; untried: number }
  /** The name belongs to a server of another pool or coordinator (or none of ours). */
  | { kind: "taken"; server: HcloudServer }
  | { kind: "failed"; what: string; error: HcloudError; failures: FailedAttempt[] };

export function createBody(r: LaunchRequest, a: LaunchAttempt) {
  const s = r.specs;
  return {
    name: r.name,
    server_type: a.serverType,
    image: r.image,
    ...(a.location ? { location: a.location } : {}),
    start_after_create: true,
    user_data: r.userData,
    labels: { ...(s.labels ?? {}), [LABEL_CONTROLLER]: r.scope.controllerId, [LABEL_POOL]: r.scope.poolId },
    public_net: { enable_ipv4: s.enable_ipv4, enable_ipv6: s.enable_ipv6 },
    ...(s.ssh_keys ? { ssh_keys: s.ssh_keys } : {}),
    ...(s.firewalls ? { firewalls: s.firewalls.map((firewall) => ({ firewall })) } : {}),
    ...(s.networks ? { networks: s.networks } : {}),
    ...(s.placement_group ? { placement_group: s.placement_group } : {}),
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Action polls one create may make in all: with at most MAX_LAUNCH_ATTEMPTS creates and as many
 * deletes of failed servers, a create stays within the Workers free plan's 50 subrequests.
 */
export const MAX_ACTION_POLLS = 20;

/**
 * Polls the action until it is no longer running, the deadline passes or the polls run out
 * (then it is taken as still running: the server exists and is coming up).
 */
export async function waitForAction(
  api: HcloudApi,
  first: Action,
  deadline: number,
  now: () => number,
  polls: { left: number },
): Promise<{ ok: true; action: Action } | { ok: false; error: HcloudError }> {
  let action = first;
  // Hetzner creates a server in seconds: short polls first, then once a second.
  for (let delay = 100; action.status === "running" && polls.left > 0 && now() + delay < deadline; delay = Math.min(delay * 2, 1000)) {
    polls.left--;
    await sleep(delay);
    const r = await api.call<{ action: Action }>("GET", `/actions/${action.id}`);
    if (!r.ok) return r;
    action = r.body.action;
  }
  return { ok: true, action };
}

async function byName(api: HcloudApi, r: LaunchRequest, clash: HcloudError, failures: FailedAttempt[]): Promise<LaunchOutcome> {
  const found = await serverByName(api, r.name);
  if (!found.ok) return { kind: "failed", what: "list servers", error: found.error, failures };
  if (!found.value) return { kind: "failed", what: "create a server", error: clash, failures };
  return inPool(found.value, r.scope) ? { kind: "existing", server: found.value } : { kind: "taken", server: found.value };
}

export async function launch(api: HcloudApi, r: LaunchRequest, now: () => number = Date.now): Promise<LaunchOutcome> {
  const failures: FailedAttempt[] = [];
  const plan = launchPlan(r.flavor, r.specs);
  const maxAttempts = r.maxAttempts ?? MAX_LAUNCH_ATTEMPTS;
  let made = 0;
  const polls = { left: MAX_ACTION_POLLS };
  for (const [i, attempt] of plan.entries()) {
    if (ruledOut(attempt, failures)) continue;
    if (made >= maxAttempts || now() >= r.deadline) {
      return { kind: "no_capacity", failures, untried: plan.slice(i).filter((a) => !ruledOut(a, failures)).length };
    }
    made++;
    const res = await api.call<{ server: HcloudServer; action: Action }>("POST", "/servers", createBody(r, attempt));
    if (!res.ok) {
      if (res.error.code === "uniqueness_error") return byName(api, r, res.error, failures);
      if (!isCapacityError(res.error.code)) return { kind: "failed", what: "create a server", error: res.error, failures };
      failures.push({ attempt, code: res.error.code });
      continue;
    }
    const waited = await waitForAction(api, res.body.action, r.deadline, now, polls);
    if (!waited.ok) return { kind: "failed", what: "read the create action", error: waited.error, failures };
    if (waited.action.status !== "error") return { kind: "launched", server: res.body.server, attempt, failures };
    // The server exists but never came up: remove it so its name is free for the next attempt.
    failures.push({ attempt, code: waited.action.error?.code ?? "action_failed" });
    const del = await api.call("DELETE", `/servers/${res.body.server.id}`);
    if (!del.ok && del.error.code !== "not_found") return { kind: "failed", what: "delete a failed server", error: del.error, failures };
  }
  return { kind: "no_capacity", failures, untried: 0 };
}
