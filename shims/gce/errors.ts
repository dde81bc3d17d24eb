import { answer, type ShimAnswer } from "../common/shim-worker.ts";
import type { GceError } from "./gce-api.ts";

export { answer, type ShimAnswer };

/**
 * How a Compute Engine failure is answered to the coordinator (docs/provider-shim-protocol.md,
 * Errors), the EC2 shim's way: the status decides whether it retries (429/5xx) or gives up
 * (other 4xx), the message is what a person reads. Pure.
 */

const THROTTLED = new Set(["rateLimitExceeded", "userRateLimitExceeded", "RESOURCE_EXHAUSTED", "backendError"]);
const CREDENTIALS = new Set(["authError", "invalid_grant", "invalid_client", "unauthorized_client", "bad_key", "invalid_scope"]);
const NOT_ALLOWED = new Set(["forbidden", "insufficientPermissions", "accessNotConfigured", "SERVICE_DISABLED", "PERMISSION_DENIED"]);

/** The IAM permissions each method needs (docs/gce-shim.md has the custom role with exactly these). */
export const PERMISSIONS: Record<string, string> = {
  "compute.instances.insert":
    "compute.instances.create, compute.disks.create, compute.subnetworks.use, compute.subnetworks.useExternalIp, compute.instances.setMetadata, compute.instances.setLabels, compute.instances.setTags (and with a service account on the machines compute.instances.setServiceAccount and iam.serviceAccounts.actAs)",
  "compute.instances.aggregatedList": "compute.instances.list",
  "compute.instances.get": "compute.instances.get",
  "compute.instances.delete": "compute.instances.delete",
  "compute.instances.start": "compute.instances.start",
  "compute.instances.stop": "compute.instances.stop",
  "compute.zoneOperations.wait": "compute.zoneOperations.get",
  "compute.zoneOperations.get": "compute.zoneOperations.get",
  "compute.machineTypes.list": "compute.machineTypes.list",
};

export type GceErrorClass = "not_found" | "throttled" | "credentials" | "not_allowed" | "capacity" | "changing" | "server" | "refused";

export function classifyGceError(e: GceError): GceErrorClass {
  if (e.method === "oauth2.token") return e.status === 0 || e.status >= 500 ? "server" : "credentials";
  if (e.status === 429 || THROTTLED.has(e.reason)) return "throttled";
  if (e.status === 401 || CREDENTIALS.has(e.reason)) return "credentials";
  if (e.reason === "quotaExceeded" || e.reason === "QUOTA_EXCEEDED" || e.reason.startsWith("ZONE_RESOURCE_POOL_EXHAUSTED"))
    return "capacity";
  if (e.status === 403 || NOT_ALLOWED.has(e.reason)) return "not_allowed";
  // An instance between states (a start while it is still stopping): the coordinator tries again.
  if (e.reason === "resourceNotReady") return "changing";
  // On insert a 404 is a missing image, network or machine type: the request is wrong, not the instance gone.
  if (e.status === 404 || e.reason === "notFound") return e.method === "compute.instances.insert" ? "refused" : "not_found";
  if (e.status === 0 || e.status >= 500) return "server";
  return "refused";
}

// The coordinator keeps the first 512 characters of an error: GCE's own message comes first, cut short.
const said = (e: GceError) => `${e.reason}: ${e.message.length > 240 ? `${e.message.slice(0, 240)}…` : e.message}`;

/**
 * The answer for a failed call. `context` leads the message. Throttling, capacity and Google-side
 * failures are retryable (503/502); credentials and permissions are permanent (403) with what to
 * fix; an unknown instance is 404; GCE refusing the parameters (bad image, machine type,
 * network…) is permanent (422).
 */
export function gceErrorAnswer(e: GceError, context = ""): ShimAnswer {
  const lead = context ? `${context}: ` : "";
  switch (classifyGceError(e)) {
    case "not_found":
      return answer(404, { error: `${lead}not found (${said(e)})` });
    case "throttled":
      return answer(
        503,
        { error: `${lead}GCE is throttling the project's API calls (${e.reason}); try again later` },
        { "retry-after": "5" },
      );
    case "capacity":
      return answer(503, { error: `${lead}no GCE capacity or quota (${said(e)})` }, { "retry-after": "30" });
    case "credentials":
      return answer(403, {
        error: `${lead}Google refused the shim's service account (${said(e)}); check the Worker's GCE_SERVICE_ACCOUNT_KEY (a current key of an enabled service account)`,
      });
    case "not_allowed":
      return answer(403, {
        error: `${lead}the shim's service account may not call ${e.method} (${said(e)}); it needs ${PERMISSIONS[e.method] ?? e.method} — grant the custom role in docs/gce-shim.md (or roles/compute.instanceAdmin.v1), and roles/iam.serviceAccountUser on a service account the machines run as`,
      });
    case "changing":
      return answer(409, { error: `${lead}the instance is changing state (${said(e)}); try again shortly` });
    case "server":
      return answer(502, { error: `${lead}GCE failed on ${e.method} (${said(e)})` });
    case "refused":
      return answer(422, { error: `${lead}GCE refused ${e.method} (${said(e)})` });
  }
}
