/**
 * What each provider's shim says of batch create, remembered per isolate: a scale set object
 * asks at most once per provider URL every few minutes (one call through its six
 * connections), not once per pass. A provider whose URL changes is asked again at once (the key
 * is its name and URL); one whose shim is upgraded in place is noticed within the memo's life.
 */

/** How long an answer is trusted: a shim upgraded to v1.1 (or back) is picked up within this. */
export const CAPABILITY_MEMO_MS = 5 * 60_000;
/** A shim that could not be asked is asked again sooner; meanwhile creates go one by one (v1). */
export const CAPABILITY_RETRY_MS = 30_000;
/** The coordinator's own cap on a batch, whatever the shim offers: ~100 × a few KiB of body, one call's worth. */
export const MAX_BATCH_CREATE = 100;

const memo = new Map<string, { until: number; max: Promise<number> }>();

/**
 * The largest batch to send the shim at `key` (0: no batch), from `ask` when not remembered.
 * `ask` says whether the shim answered (`known`); a failed ask counts as no batch, briefly.
 */
export function rememberedBatchMax(
  key: string,
  ask: () => Promise<{ known: boolean; max: number }>,
  now: number = Date.now(),
): Promise<number> {
  const hit = memo.get(key);
  if (hit && hit.until > now) return hit.max;
  const entry = { until: now + CAPABILITY_MEMO_MS, max: Promise.resolve(0) };
  entry.max = ask().then(
    (answer) => {
      if (!answer.known) entry.until = now + CAPABILITY_RETRY_MS;
      return Math.max(0, Math.min(answer.max, MAX_BATCH_CREATE));
    },
    () => {
      entry.until = now + CAPABILITY_RETRY_MS;
      return 0;
    },
  );
  memo.set(key, entry);
  return entry.max;
}

/** Forgets every remembered answer (tests that change a shim's capabilities under the same URL). */
export function forgetShimCapabilities(): void {
  memo.clear();
}
