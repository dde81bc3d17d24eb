import type { EntityKind } from "./schema";
import type { EntityRef } from "../github/workflow-job";
import type { RoutableScaleSet } from "../scaleset/routing";

/** A registered entity a delivery may come from. */
export interface SenderEntity {
  id: string;
  kind: EntityKind;
  lookupKey: string;
  endpointName: string;
  webhookSecretEnc: string;
}

export interface DirectoryScaleSet extends RoutableScaleSet {
  entityId: string;
}

/** What intake needs to authenticate and route one delivery. */
export interface Directory {
  /** The delivery's entities registered on its endpoint, most specific first. */
  entities: SenderEntity[];
  /** Every scale set of those entities (disabled ones too; routing skips them). */
  scaleSets: DirectoryScaleSet[];
  /** Served from this isolate's cache rather than read just now. */
  cached: boolean;
}

/**
 * Which endpoint a delivery belongs to: GitHub Enterprise Server names itself in
 * `X-GitHub-Enterprise-Host`, matched against the host of each endpoint's base URL;
 * without it the delivery is from github.com.
 */
export function endpointMatches(endpoint: { name: string; baseUrl: string }, enterpriseHost: string | null): boolean {
  if (!enterpriseHost) return endpoint.name === "github.com";
  let url: URL;
  try {
    url = new URL(endpoint.baseUrl);
  } catch {
    return false;
  }
  const h = enterpriseHost.trim().toLowerCase();
  return url.host.toLowerCase() === h || url.hostname.toLowerCase() === h;
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
  endpoint_name: string;
  webhook_secret_enc: string;
  base_url: string;
}

interface ScaleSetRow {
  id: string;
  entity_id: string;
  labels: string;
  enabled: number;
  priority: number;
  created_at: number;
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
  const marks = keys.map(() => "?").join(", ");
  const [entityRows, scaleSetRows] = await db.batch<EntityRow | ScaleSetRow>([
    db
      .prepare(
        `SELECT e.id, e.kind, e.lookup_key, e.endpoint_name, e.webhook_secret_enc, g.base_url
         FROM entities e JOIN github_endpoints g ON g.name = e.endpoint_name
         WHERE e.lookup_key IN (${marks})`,
      )
      .bind(...keys),
    db
      .prepare(
        `SELECT s.id, s.entity_id, s.labels, s.enabled, s.priority, s.created_at
         FROM scale_sets s JOIN entities e ON e.id = s.entity_id
         WHERE e.lookup_key IN (${marks})`,
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
        endpointName: r.endpoint_name,
        webhookSecretEnc: r.webhook_secret_enc,
      });
    }
  }
  const ids = new Set(entities.map((e) => e.id));
  const scaleSets = (scaleSetRows!.results as ScaleSetRow[])
    .filter((s) => ids.has(s.entity_id))
    .map((s) => ({
      id: s.id,
      entityId: s.entity_id,
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
