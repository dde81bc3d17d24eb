/**
 * Cloudflare lets one invocation have six outbound connections waiting for response headers at
 * once; a seventh fetch queues until one of them has its headers. A Durable Object shares one
 * I/O context across all its requests and its alarm, so the six are per object. This plays that
 * limit: a fetch that lets at most `limit` calls wait for headers at once, the rest queued in
 * order. A slot is freed as soon as the headers (or an error) arrive: reading the body is free.
 * A call whose signal aborts while it is queued leaves the queue and rejects with the reason.
 */

import { measuredFetch } from "./invocation-cost";

export interface OutboundLimiter {
  fetch: typeof fetch;
  /** Calls waiting for headers now. */
  active(): number;
  /** Calls queued for a slot now. */
  queued(): number;
  /** The most calls ever queued at once. */
  maxQueued(): number;
}

export function outboundLimiter(limit: number, base: typeof fetch = measuredFetch): OutboundLimiter {
  if (!Number.isInteger(limit) || limit < 1) throw new Error(`outbound limit must be a positive integer, not ${limit}`);
  let active = 0;
  let maxQueued = 0;
  const queue: { start: () => void; signal: AbortSignal | null; drop: () => void }[] = [];

  const release = () => {
    active--;
    const next = queue.shift();
    if (next) next.start();
  };

  const slot = (signal: AbortSignal | null): Promise<void> => {
    if (signal?.aborted) return Promise.reject(signal.reason);
    if (active < limit) {
      active++;
      return Promise.resolve();
    }
    return new Promise<void>((resolve, reject) => {
      const entry = {
        signal,
        start: () => {
          signal?.removeEventListener("abort", entry.drop);
          active++;
          resolve();
        },
        drop: () => {
          const i = queue.indexOf(entry);
          if (i >= 0) queue.splice(i, 1);
          reject(signal!.reason);
        },
      };
      signal?.addEventListener("abort", entry.drop, { once: true });
      queue.push(entry);
      maxQueued = Math.max(maxQueued, queue.length);
    });
  };

  const limited = (async (input: RequestInfo | URL, init?: RequestInit) => {
    const signal = init?.signal ?? (input instanceof Request ? input.signal : null);
    await slot(signal);
    try {
      return await base(input, init);
    } finally {
      release();
    }
  }) as typeof fetch;

  return { fetch: limited, active: () => active, queued: () => queue.length, maxQueued: () => maxQueued };
}
