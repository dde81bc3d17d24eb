/**
 * Sending one webhook delivery the way the fake GitHub does (Node only): signed with the hook's
 * secret (X-Hub-Signature-256), and with `retry` sent again until the receiver takes it. Shared
 * by the workflow player (workflow_job) and the App installation events (apps/installations.ts).
 */
import { createHmac } from "node:crypto";

// Unref'd: a delivery still being retried (to a receiver that went away) does not keep the process alive.
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms).unref());

/** GitHub's signature header for `body` under `secret`. */
export const signature = (secret: string, body: string) => `sha256=${createHmac("sha256", secret).update(body).digest("hex")}`;

/** The headers every delivery carries, signed; `extra` adds the event's own (hook target, installation). */
export function deliveryHeaders(event: string, guid: string, secret: string, body: string, extra: Record<string, string> = {}) {
  return {
    "content-type": "application/json",
    "user-agent": "GitHub-Hookshot/fake",
    "x-github-event": event,
    "x-github-delivery": guid,
    "x-hub-signature-256": signature(secret, body),
    ...extra,
  };
}

/**
 * POSTs the delivery, counting attempts and the last status (0: no answer) on `record`. GitHub
 * does not retry on its own; `retry` plays the operator pressing "Redeliver" until a 2xx, a
 * refusal (4xx but 429) or 200 attempts, waiting 100 ms doubling to 2 s between them.
 */
export async function postDelivery(
  url: string,
  headers: Record<string, string>,
  body: string,
  retry: boolean,
  record: { attempts: number; status: number | null },
): Promise<void> {
  for (let delay = 100; ; delay = Math.min(delay * 2, 2000)) {
    record.attempts++;
    try {
      const res = await fetch(url, { method: "POST", headers, body, signal: AbortSignal.timeout(10_000) });
      await res.arrayBuffer();
      record.status = res.status;
      if (res.ok || !retry || (res.status >= 400 && res.status < 500 && res.status !== 429)) return;
    } catch {
      record.status = 0;
      if (!retry) return;
    }
    if (record.attempts >= 200) return;
    await sleep(delay);
  }
}
