/**
 * What a Gitea webhook delivery needs before the shared intake pipeline takes it
 * (src/intake/receive-delivery.ts). Gitea (services/webhook/deliver.go) signs the raw body with
 * HMAC-SHA256 and sends the hex digest bare in `X-Gitea-Signature`; its `workflow_job` payload is
 * `WorkflowJobPayload` (modules/structs/hook.go) with an `ActionWorkflowJob`, GitHub's shape
 * except that times not reached yet are Go's zero time rather than null.
 */

const BARE_HEX_SHA256 = /^[0-9a-f]{64}$/i;

/** `X-Gitea-Signature` in the `sha256=<hex>` form the signature check reads; null when it is not a SHA-256 hex digest. */
export function giteaSignature(header: string): string | null {
  const v = header.trim();
  return BARE_HEX_SHA256.test(v) ? `sha256=${v.toLowerCase()}` : null;
}

/** The host of the repository's web URL: which Gitea endpoint the delivery says it comes from. */
export function giteaDeliveryHost(json: unknown): string | null {
  const url = (json as { repository?: { html_url?: unknown } } | null)?.repository?.html_url;
  if (typeof url !== "string") return null;
  try {
    return new URL(url).host;
  } catch {
    return null;
  }
}

const JOB_TIMES = ["created_at", "started_at", "completed_at"] as const;
/** Go's zero time.Time, which Gitea sends for a time not reached yet (a queued job's started_at). */
const isZeroTime = (v: unknown) => typeof v === "string" && v.startsWith("0001-01-01");

/** The payload with the job's zero times as null, as GitHub would send them. A copy; the signed body is untouched. */
export function withoutZeroTimes(json: unknown): unknown {
  const job = (json as { workflow_job?: Record<string, unknown> } | null)?.workflow_job;
  if (!job || typeof job !== "object") return json;
  const fixed = { ...job };
  for (const k of JOB_TIMES) if (isZeroTime(fixed[k])) fixed[k] = null;
  return { ...(json as object), workflow_job: fixed };
}
