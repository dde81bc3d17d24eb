/**
 * A flavor catalogue kept in the Worker isolate for a while (shared by the EC2 and GCE shims).
 * The coordinator asks for a pool's catalogue whenever it shapes machines, and the cloud's
 * answer changes only when the cloud adds a machine type: without this, every shaped scale
 * set's reconcile would page through the cloud's whole list of types. A failed load is not
 * kept (the next request tries again); concurrent requests for one key share one load.
 */

export const CATALOGUE_TTL_MS = 10 * 60_000;
/** Keys are per account and filter: a bound keeps a Worker serving many pools from growing without end. */
const MAX_ENTRIES = 64;

export type Loaded<T, E> = { ok: true; value: T } | { ok: false; error: E };

export interface CatalogueCache<T, E> {
  /** The value under `key`: kept while fresh, else loaded. `cached`: this call made no cloud call. */
  get(key: string, load: () => Promise<Loaded<T, E>>, now?: () => number): Promise<{ result: Loaded<T, E>; cached: boolean }>;
  clear(): void;
}

export function createCatalogueCache<T, E>(ttlMs = CATALOGUE_TTL_MS): CatalogueCache<T, E> {
  const entries = new Map<string, { value: T; expiresAt: number } | Promise<Loaded<T, E>>>();
  return {
    async get(key, load, now = Date.now) {
      const hit = entries.get(key);
      if (hit instanceof Promise) return { result: await hit, cached: true };
      if (hit && hit.expiresAt > now()) return { result: { ok: true, value: hit.value }, cached: true };
      const pending = load();
      entries.delete(key);
      entries.set(key, pending);
      const result = await pending.catch((err) => {
        entries.delete(key);
        throw err;
      });
      if (result.ok) entries.set(key, { value: result.value, expiresAt: now() + ttlMs });
      else entries.delete(key);
      // Map keeps insertion order: the first keys are the oldest loads.
      for (const k of entries.keys()) {
        if (entries.size <= MAX_ENTRIES) break;
        entries.delete(k);
      }
      return { result, cached: false };
    },
    clear: () => entries.clear(),
  };
}
