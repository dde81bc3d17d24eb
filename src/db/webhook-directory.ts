import type { EntityKind } from "./schema";
import type { ScopedScaleSet } from "../intake/routing";
import { endpointMatches, type EntityRef, type SenderEntity } from "../intake/senders";

export type DirectoryScaleSet = ScopedScaleSet;

/** What intake needs to authenticate and route one delivery. */
export interface Directory {
  /** The delivery's entities registered on its endpoint, most specific first: the ones whose secrets may have signed it. */
  entities: SenderEntity[];
  /**
   * Every scale set of those entities and of the enterprises they were registered under
   * (disabled ones too; routing skips them). Which of them a job may use depends on who signed
   * it (intake/routing.ts inScope).
   */
  scaleSets: DirectoryScaleSet[];
  /** Served from this isolate's cache rather than read just now. */
  cached: boolean;
}

// Per-isolate cache: a burst of deliveries for one repository reads the directory once.
// Entries live briefly (a changed secret, scale set or label takes effect within DIRECTORY_TTL_MS;
// a delivery that fails verification always re-reads, so a new secret works at once).
export const DIRECTORY_TTL_MS = 5_000;
const MAX_ENTRIES = 512;
const cache = new Map<string, { at: number; directory: Directory }>();

interface EntityRow {
  id: string;
  kind: EntityKind;
  lookup_key: string;
  owner: string;
  endpoint_name: string;
  webhook_secret_enc: string;
  use_parent_scale_sets: number;
  enterprise: string | null;
  base_url: string;
}

interface ScaleSetRow {
  id: string;
  entity_id: string;
  labels: string;
  enabled: number;
  priority: number;
  created_at: number;
  lookup_key: string;
}

/**
 * Reads the delivery's entities and their scale sets in one D1 round trip (or none, from
 * the cache). `fresh` bypasses the cache.
 */
export async function loadDirectory(
  db: D1Database,
  refs: readonly EntityRef[],
  enterpriseHost: string | null,
  { fresh = false, now = Date.now() }: { fresh?: boolean; now?: number } = {},
): Promise<Directory> {
  if (refs.length === 0) return { entities: [], scaleSets: [], cached: false };
  const key = `${enterpriseHost ?? ""}|${refs.map((r) => r.lookupKey).join("|")}`;
  const hit = cache.get(key);
  if (!fresh && hit && now - hit.at < DIRECTORY_TTL_MS) return { ...hit.directory, cached: true };

  const keys = refs.map((r) => r.lookupKey);
  const marks = keys.map((_, i) => `?${i + 1}`).join(", ");
  // The named entities, and the enterprises they were registered under (their scale sets may
  // take the jobs of entities registered to use them).
  const wanted = `(e.lookup_key IN (${marks})
    OR e.lookup_key IN (SELECT 'enterprise:' || lower(x.enterprise) FROM entities x WHERE x.lookup_key IN (${marks}) AND x.enterprise IS NOT NULL))`;
  const [entityRows, scaleSetRows] = await db.batch<EntityRow | ScaleSetRow>([
    db
      .prepare(
        `SELECT e.id, e.kind, e.lookup_key, e.owner, e.endpoint_name, e.webhook_secret_enc, e.use_parent_scale_sets, e.enterprise, g.base_url
         FROM entities e JOIN github_endpoints g ON g.name = e.endpoint_name
         WHERE ${wanted}`,
      )
      .bind(...keys),
    db
      .prepare(
        `SELECT s.id, s.entity_id, s.labels, s.enabled, s.priority, s.created_at, e.lookup_key
         FROM scale_sets s JOIN entities e ON e.id = s.entity_id
         WHERE ${wanted}`,
      )
      .bind(...keys),
  ]);

  const onEndpoint = (entityRows!.results as EntityRow[]).filter((r) =>
    endpointMatches({ name: r.endpoint_name, baseUrl: r.base_url }, enterpriseHost),
  );
  const entities: SenderEntity[] = [];
  for (const ref of refs) {
    const r = onEndpoint.find((row) => row.lookup_key === ref.lookupKey && row.kind === ref.kind);
    if (r) {
      entities.push({
        id: r.id,
        kind: r.kind,
        lookupKey: r.lookup_key,
        owner: r.owner,
        endpointName: r.endpoint_name,
        webhookSecretEnc: r.webhook_secret_enc,
        useParentScaleSets: r.use_parent_scale_sets === 1,
        enterprise: r.enterprise,
      });
    }
  }
  const ids = new Set(onEndpoint.map((e) => e.id));
  const scaleSets = (scaleSetRows!.results as ScaleSetRow[])
    .filter((s) => ids.has(s.entity_id))
    .map((s) => ({
      id: s.id,
      entityId: s.entity_id,
      lookupKey: s.lookup_key,
      labels: JSON.parse(s.labels) as string[],
      enabled: s.enabled === 1,
      priority: s.priority,
      createdAt: s.created_at,
    }));

  const directory = { entities, scaleSets, cached: false };
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
