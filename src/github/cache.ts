import type { Db } from "../db/client";
import { type Cached, readCache, writeCache } from "../db/github/github-state-store";

/**
 * The cached value while younger than `ttlMs`, else a fresh one from `load` (stored for the
 * next caller in any isolate). If `load` fails and a stale value exists, the stale value is
 * better than nothing for facts that change hourly at most.
 */
export async function cachedFetch<T>(
  db: Db,
  input: { endpointName: string; key: string; ttlMs: number; now: number; force?: boolean },
  load: () => Promise<T>,
): Promise<Cached<T> & { fromCache: boolean }> {
  const hit = await readCache<T>(db, input.endpointName, input.key);
  if (hit && !input.force && input.now - hit.fetchedAt < input.ttlMs) return { ...hit, fromCache: true };
  let value: T;
  try {
    value = await load();
  } catch (err) {
    if (hit && !input.force) return { ...hit, fromCache: true };
    throw err;
  }
  await writeCache(db, input.endpointName, input.key, value, input.now);
  return { value, fetchedAt: input.now, fromCache: false };
}
