/**
 * Cloudflare lets one invocation have six outbound connections waiting for response headers at
 * once; a seventh fetch queues until one of them has its headers. A Durable Object shares one
 * I/O context across all its requests and its alarm, so the six are per object. This plays that
 * limit: a fetch that lets at most `limit` calls wait for headers at once, the rest queued in
 * order. A slot is freed as soon as the headers (or an error) arrive: reading the body is free.
 * A call whose signal aborts while it is queued leaves the queue and rejects with the reason.
 *
 * `fetchFirst` is the same limit with a place at the head of the queue, for the scale set API
 * listener: its long poll waits up to ~50 s for headers, and the platform counts it among the
 * six like any other call, so it takes one slot; but queued behind a burst's hundreds of creates
 * it would stop the scale set hearing of jobs for minutes. It waits at most for the first slot
 * to free (one call's headers), never for the queue.
 */

import { measuredFetch } from "./invocation-cost";

export interface OutboundLimiter {
  fetch: typeof fetch;
  /** The same limit, ahead of every queued `fetch` call (the listener's calls). */
  fetchFirst: typeof fetch;
  /** Calls waiting for headers now. */
  active(): number;
  /** Calls queued for a slot now. */
  queued(): number;
  /** The most calls ever queued at once. */
  maxQueued(): number;
  /** The most `fetch` (not `fetchFirst`) calls ever waiting for headers at once. */
  maxActiveInOrder(): number;
  /** `fetchFirst` calls waiting for headers now. */
  activeFirst(): number;
}

type Entry = { start: () => void; signal: AbortSignal | null; drop: () => void };

export function outboundLimiter(limit: number, base: typeof fetch = measuredFetch): OutboundLimiter {
  if (!Number.isInteger(limit) || limit < 1) throw new Error(`outbound limit must be a positive integer, not ${limit}`);
  let active = 0;
  let activeFirst = 0;
  let maxQueued = 0;
  let maxActiveInOrder = 0;
  const queue: Entry[] = [];

  const release = () => {
    active--;
    const next = queue.shift();
    if (next) next.start();
  };

  const slot = (signal: AbortSignal | null, first: boolean): Promise<void> => {
    if (signal?.aborted) return Promise.reject(signal.reason);
    if (active < limit) {
      active++;
      return Promise.resolve();
    }
    return new Promise<void>((resolve, reject) => {
      const entry: Entry = {
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
      if (first) queue.unshift(entry);
      else queue.push(entry);
      maxQueued = Math.max(maxQueued, queue.length);
    });
  };

  const limited = (first: boolean) =>
    (async (input: RequestInfo | URL, init?: RequestInit) => {
      const signal = init?.signal ?? (input instanceof Request ? input.signal : null);
      await slot(signal, first);
      if (first) activeFirst++;
      else maxActiveInOrder = Math.max(maxActiveInOrder, active - activeFirst);
      try {
        return await base(input, init);
      } finally {
        if (first) activeFirst--;
        release();
      }
    }) as typeof fetch;

  return {
    fetch: limited(false),
    fetchFirst: limited(true),
    active: () => active,
    queued: () => queue.length,
    maxQueued: () => maxQueued,
    maxActiveInOrder: () => maxActiveInOrder,
    activeFirst: () => activeFirst,
  };
}
