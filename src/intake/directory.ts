import { readDirectory } from "../db/directory/directory-store";
import type { AppHook } from "./app-hooks";
import type { ScopedScaleSet } from "./routing";
import { type DeliveryOrigin, type EntityRef, originKey, originMatches, type SenderEntity } from "./senders";

/** What intake needs to authenticate and route one delivery. */
export interface Directory {
  /** The delivery's entities registered on its endpoint, most specific first: the ones whose secrets may have signed it. */
  entities: SenderEntity[];
  /**
   * Every scale set of those entities and of the enterprises they were registered under
   * (disabled ones too; routing skips them). Which of them a job may use depends on who signed
   * it (routing.ts inScope).
   */
  scaleSets: ScopedScaleSet[];
  /** The App credentials on the delivery's endpoint that hold their App's webhook secret. */
  appHooks: AppHook[];
  /** Served from this isolate's cache rather than read just now. */
  cached: boolean;
}

// Per-isolate cache: a burst of deliveries for one repository reads the directory once.
// Entries live briefly (a changed secret, scale set or label takes effect within DIRECTORY_TTL_MS;
// a delivery that fails verification always re-reads, so a new secret works at once).
export const DIRECTORY_TTL_MS = 5_000;
const MAX_ENTRIES = 512;
const cache = new Map<string, { at: number; directory: Directory }>();

/**
 * The delivery's entities on its endpoint, their scale sets and the endpoint's App webhook
 * secrets: one D1 round trip, or none from the cache. `fresh` bypasses the cache. A delivery
 * that names no entity reads nothing unless it may come from an App's webhook (`app`: its ping).
 */
export async function loadDirectory(
  db: D1Database,
  refs: readonly EntityRef[],
  origin: DeliveryOrigin,
  {
    fresh = false,
    now = Date.now(),
    app = false,
    endpoint,
  }: {
    fresh?: boolean;
    now?: number;
    app?: boolean;
    /** Only this endpoint's entities and Apps: what delivery recovery read from one endpoint is about that endpoint alone. */
    endpoint?: string;
  } = {},
): Promise<Directory> {
  if (refs.length === 0 && !app) return { entities: [], scaleSets: [], appHooks: [], cached: false };
  const key = `${originKey(origin)}|${endpoint ?? ""}|${refs.map((r) => r.lookupKey).join("|")}`;
  const hit = cache.get(key);
  if (!fresh && hit && now - hit.at < DIRECTORY_TTL_MS) return { ...hit.directory, cached: true };

  const named = await readDirectory(db, refs);
  const onEndpoint = named.entities.filter(
    (e) =>
      originMatches({ name: e.endpointName, baseUrl: e.baseUrl, forge: e.forge }, origin) &&
      (endpoint === undefined || e.endpointName === endpoint),
  );
  const entities: SenderEntity[] = [];
  for (const ref of refs) {
    const e = onEndpoint.find((row) => row.lookupKey === ref.lookupKey && row.kind === ref.kind);
    if (e) entities.push(e);
  }
  const ids = new Set(onEndpoint.map((e) => e.id));
  const scaleSets = named.scaleSets.filter((s) => ids.has(s.entityId));

  const appHooks = named.appHooks
    .filter(
      (a) =>
        originMatches({ name: a.endpointName, baseUrl: a.baseUrl, forge: a.forge }, origin) &&
        (endpoint === undefined || a.endpointName === endpoint),
    )
    .map(({ id, appId, installationId, webhookSecretEnc }) => ({ id, appId, installationId, webhookSecretEnc }));

  const directory = { entities, scaleSets, appHooks, cached: false };
  if (entities.length > 0) {
    cache.delete(key);
    if (cache.size >= MAX_ENTRIES) cache.delete(cache.keys().next().value!);
    cache.set(key, { at: now, directory });
  }
  return directory;
}

/** Forgets cached directories (tests that change entities between deliveries). */
export function clearDirectoryCache(): void {
  cache.clear();
}
