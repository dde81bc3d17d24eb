import type { AppHook } from "../../intake/app-hooks";
import type { ScopedScaleSet } from "../../intake/routing";
import type { EntityRef, SenderEntity } from "../../intake/senders";
import type { Forge } from "../github/schema";
import type { EntityKind } from "./schema";

/** A registered entity a delivery names, with its endpoint's base URL (which endpoint it came from is decided by intake). */
export interface NamedEntity extends SenderEntity {
  baseUrl: string;
  /** Its endpoint's forge: a delivery reaches only entities of the forge whose route it came in on. */
  forge: Forge;
}

/** An App credential with a webhook secret, with its endpoint's base URL. */
export interface NamedAppHook extends AppHook {
  endpointName: string;
  baseUrl: string;
  forge: Forge;
}

interface EntityRow {
  id: string;
  kind: EntityKind;
  lookup_key: string;
  owner: string;
  endpoint_name: string;
  webhook_secret_enc: string;
  credentials_id: string;
  use_parent_scale_sets: number;
  enterprise: string | null;
  base_url: string;
  forge: Forge;
}

interface AppHookRow {
  id: string;
  app_id: number;
  installation_id: number;
  webhook_secret_enc: string;
  endpoint_name: string;
  base_url: string;
  forge: Forge;
}

interface ScaleSetRow {
  id: string;
  entity_id: string;
  labels: string;
  enabled: number;
  priority: number;
  created_at: number;
  lookup_key: string;
  shape_key: string | null;
}

/**
 * The webhook directory's read, in one D1 round trip: the registered entities a delivery
 * names (on any endpoint), the enterprises they were registered under (their scale sets may
 * take the jobs of entities registered to use them), the scale sets of all of those, and every
 * GitHub App credential with a webhook secret (a handful: one per App installation, whatever
 * the number of entities).
 */
export async function readDirectory(
  db: D1Database,
  refs: readonly EntityRef[],
): Promise<{ entities: NamedEntity[]; scaleSets: ScopedScaleSet[]; appHooks: NamedAppHook[] }> {
  const keys = refs.map((r) => r.lookupKey);
  const marks = keys.map((_, i) => `?${i + 1}`).join(", ");
  const wanted = `(e.lookup_key IN (${marks})
    OR e.lookup_key IN (SELECT 'enterprise:' || lower(x.enterprise) FROM entities x WHERE x.lookup_key IN (${marks}) AND x.enterprise IS NOT NULL))`;
  const [appHookRows, entityRows, scaleSetRows] = await db.batch<EntityRow | ScaleSetRow | AppHookRow>([
    db.prepare(
      `SELECT c.id, c.app_id, c.installation_id, c.webhook_secret_enc, c.endpoint_name, g.base_url, g.forge
       FROM github_credentials c JOIN github_endpoints g ON g.name = c.endpoint_name
       WHERE c.auth_type = 'app' AND c.webhook_secret_enc IS NOT NULL AND c.app_id IS NOT NULL AND c.installation_id IS NOT NULL`,
    ),
    db
      .prepare(
        `SELECT e.id, e.kind, e.lookup_key, e.owner, e.endpoint_name, e.webhook_secret_enc, e.credentials_id, e.use_parent_scale_sets, e.enterprise, g.base_url, g.forge
         FROM entities e JOIN github_endpoints g ON g.name = e.endpoint_name
         WHERE ${wanted}`,
      )
      .bind(...keys),
    db
      .prepare(
        `SELECT s.id, s.entity_id, s.labels, s.enabled AND s.intake = 'webhook' AS enabled, s.priority, s.created_at, e.lookup_key, json_extract(s.shape, '$.key') AS shape_key
         FROM scale_sets s JOIN entities e ON e.id = s.entity_id
         WHERE ${wanted}`,
      )
      .bind(...keys),
  ]);
  return {
    entities: (entityRows!.results as EntityRow[]).map((r) => ({
      id: r.id,
      kind: r.kind,
      lookupKey: r.lookup_key,
      owner: r.owner,
      endpointName: r.endpoint_name,
      webhookSecretEnc: r.webhook_secret_enc,
      credentialsId: r.credentials_id,
      useParentScaleSets: r.use_parent_scale_sets === 1,
      enterprise: r.enterprise,
      baseUrl: r.base_url,
      forge: r.forge,
    })),
    scaleSets: (scaleSetRows!.results as ScaleSetRow[]).map((s) => ({
      id: s.id,
      entityId: s.entity_id,
      lookupKey: s.lookup_key,
      labels: JSON.parse(s.labels) as string[],
      enabled: s.enabled === 1,
      priority: s.priority,
      createdAt: s.created_at,
      shapeKey: s.shape_key ?? null,
    })),
    appHooks: (appHookRows!.results as AppHookRow[]).map((a) => ({
      id: a.id,
      appId: a.app_id,
      installationId: a.installation_id,
      webhookSecretEnc: a.webhook_secret_enc,
      endpointName: a.endpoint_name,
      baseUrl: a.base_url,
      forge: a.forge,
    })),
  };
}

/**
 * The lookup keys of the whole-instance entities (kind `enterprise`) on Gitea endpoints: the
 * entities a Gitea system webhook's delivery may come from, which its payload cannot name.
 */
export async function giteaInstanceKeys(db: D1Database): Promise<string[]> {
  const rows = await db
    .prepare(
      `SELECT e.lookup_key FROM entities e JOIN github_endpoints g ON g.name = e.endpoint_name
        WHERE e.kind = 'enterprise' AND g.forge = 'gitea' ORDER BY e.lookup_key`,
    )
    .all<{ lookup_key: string }>();
  return rows.results.map((r) => r.lookup_key);
}
