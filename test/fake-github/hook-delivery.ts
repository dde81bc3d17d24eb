/**
 * How the fake GitHub signs and frames a webhook delivery (Node only): GitHub's headers, the
 * signature over the body with the hook's secret (X-Hub-Signature-256; none when the hook has no
 * secret), and the body in the hook's content type. Sending it, once, and GitHub's record of it
 * are in deliveries.ts. Shared by the workflow player (workflow_job) and the App installation
 * events (apps/installations.ts).
 */
import { createHmac } from "node:crypto";

/** GitHub's signature header for `body` under `secret`. */
export const signature = (secret: string, body: string) => `sha256=${createHmac("sha256", secret).update(body).digest("hex")}`;

/**
 * The body GitHub posts for `payload` (JSON text): as it is for `json` hooks, or as the form field
 * `payload` for `form` hooks (the content type REST makes a hook with when it names none).
 */
export function deliveryBody(payload: string, contentType: string): { body: string; type: string } {
  return contentType === "form"
    ? { body: `payload=${encodeURIComponent(payload)}`, type: "application/x-www-form-urlencoded" }
    : { body: payload, type: "application/json" };
}

/**
 * The headers every delivery carries, signed when there is a secret; `extra` adds the event's own
 * (hook id and target, installation, enterprise host).
 */
export function deliveryHeaders(
  event: string,
  guid: string,
  secret: string | null,
  body: string,
  extra: Record<string, string> = {},
  contentType = "application/json",
) {
  return {
    "content-type": contentType,
    "user-agent": "GitHub-Hookshot/fake",
    "x-github-event": event,
    "x-github-delivery": guid,
    ...(secret ? { "x-hub-signature-256": signature(secret, body) } : {}),
    ...extra,
  };
}
