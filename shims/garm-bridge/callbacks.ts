import type { ShimCallback } from "../../src/providers/shim-protocol.ts";
import { requestTarget, signRequest } from "../../src/providers/shim-signing.ts";
import type { Logger } from "./log.ts";

/**
 * Delivers the outcome of an accepted (202) operation to the coordinator, signed with the
 * shared secret. 5xx answers and transport failures are retried with doubling delays; other
 * answers are final (a 4xx means resending the same body cannot help — see the protocol's
 * callback table). The coordinator also polls GET, so a callback that never arrives only
 * delays the outcome.
 */

export interface CallbackSettings {
  url: string;
  secret: () => string;
  attempts: number;
  initialDelayMs: number;
  /** Per attempt. */
  timeoutMs?: number;
}

const MAX_DELAY_MS = 60_000;

export type CallbackOutcome =
  | { delivered: true; status: number; attempts: number }
  | { delivered: false; status: number | null; attempts: number };

export function createCallbackSender(settings: CallbackSettings, log: Logger) {
  const pending = new Set<Promise<unknown>>();
  let closed = false;
  const sleeps = new Set<{ timer: ReturnType<typeof setTimeout>; resolve: () => void }>();
  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const entry = {
        timer: setTimeout(() => {
          sleeps.delete(entry);
          resolve();
        }, ms),
        resolve,
      };
      sleeps.add(entry);
    });

  async function deliver(callback: ShimCallback): Promise<CallbackOutcome> {
    const body = JSON.stringify(callback);
    const url = new URL(settings.url);
    let status: number | null = null;
    for (let attempt = 1; attempt <= settings.attempts; attempt++) {
      if (closed) break;
      try {
        const headers = {
          "content-type": "application/json",
          accept: "application/json",
          "user-agent": "edgerunner-garm-bridge/1",
          ...(await signRequest(settings.secret(), { method: "POST", pathWithQuery: requestTarget(url), body })),
        };
        const res = await fetch(url, {
          method: "POST",
          headers,
          body,
          redirect: "manual",
          signal: AbortSignal.timeout(settings.timeoutMs ?? 30_000),
        });
        status = res.status;
        await res.arrayBuffer().catch(() => undefined);
        if (res.ok) {
          log("callback_delivered", { operation_id: callback.operation_id, instance: callback.instance_name, status, attempt });
          return { delivered: true, status, attempts: attempt };
        }
        const retryable = status >= 500 || status === 408 || status === 429;
        log("callback_refused", {
          operation_id: callback.operation_id,
          instance: callback.instance_name,
          status,
          attempt,
          retrying: retryable && attempt < settings.attempts,
        });
        if (!retryable) return { delivered: false, status, attempts: attempt };
      } catch (err) {
        status = null;
        log("callback_failed", {
          operation_id: callback.operation_id,
          instance: callback.instance_name,
          attempt,
          error: (err as Error).message,
          retrying: attempt < settings.attempts,
        });
      }
      if (attempt < settings.attempts) await sleep(Math.min(settings.initialDelayMs * 2 ** (attempt - 1), MAX_DELAY_MS));
    }
    log("callback_abandoned", { operation_id: callback.operation_id, instance: callback.instance_name, last_status: status });
    return { delivered: false, status, attempts: settings.attempts };
  }

  return {
    /** Fire and forget; `idle()` waits for every delivery under way. */
    send(callback: ShimCallback): Promise<CallbackOutcome> {
      const p = deliver(callback);
      pending.add(p);
      void p.finally(() => pending.delete(p));
      return p;
    },
    async idle(): Promise<void> {
      while (pending.size) await Promise.allSettled([...pending]);
    },
    /** Stops retrying: pending deliveries give up at their next wait. */
    close() {
      closed = true;
      for (const s of sleeps) {
        clearTimeout(s.timer);
        s.resolve();
      }
      sleeps.clear();
    },
  };
}
export type CallbackSender = ReturnType<typeof createCallbackSender>;
