import type { RunnerSample } from "../../scaleset/runner/runner-sample";
import type { QueueWait } from "../../ui/charts/queue-percentiles";
import { monthOf } from "../../usage/usage-report";
import type { EntityKind } from "../directory/schema";
import type { Forge } from "../github/schema";
import { hasServingTwin } from "../jobs/job-twins";
import { type UsageRow, usageRangeStatement } from "../metrics/usage-store";
import { parseRecoveryDigest, recoveryDigestStatements } from "../recovery/recovery-store";
import { CHART_WINDOW_MS, ENTITY_NAME, QUEUE_WAITS_ALL, queueWaits, rows, SAMPLE_COLUMNS, samples } from "./dashboard-rows";

/**
 * What the dashboard reads from D1: one function per page, each one D1 round trip (a batch),
 * returning plain rows in the shape the page shows. Raw SQL rather than drizzle: the overview's
 * counts are CASE sums and correlated subqueries, and every page batches several reads into one
 * round trip. Columns keep D1's snake_case names; JSON columns come back parsed.
 */

export interface OverviewScaleSet {
  id: string;
  name: string;
  enabled: boolean;
  max_runners: number;
  provider: string;
  kind: EntityKind;
  entity: string;
}

/** A scale set's live (not deleted) instances, by what they are doing. */
export interface InstanceCounts {
  live: number;
  idle: number;
  busy: number;
  starting: number;
  errored: number;
}

export interface CredentialHealthRow {
  id: string;
  name: string;
  endpoint_name: string;
  auth_type: string;
  /** Null while GitHub has not been called with the credential yet (no state row). */
  health: string | null;
  failure_reason: string | null;
  rate_limit_limit: number | null;
  rate_limit_remaining: number | null;
  rate_limit_reset_at: number | null;
  blocked_until: number | null;
}

/** A repository, organization or enterprise with the credentials it acts with and its credential pool. */
export interface OverviewEntity {
  id: string;
  kind: EntityKind;
  entity: string;
  endpoint_name: string;
  /** The endpoint's forge: github, gitea or forgejo. */
  forge: Forge;
  credentials_id: string;
  /** Its pool's credential ids, oldest member first. */
  pool: string[];
  /** Its credentials' App, when they hold the App's webhook secret (the App's webhook feeds it). */
  app_webhook_id: number | null;
}

/** Delivery recovery as the overview shows it (src/recovery/): each watch's state, each entity's last day, the last pass. */
export interface OverviewRecovery {
  watches: { key: string; kind: string; entity_id: string | null; status: string; detail: string | null; status_since: number }[];
  /** Per entity, the last 24 hours. */
  last24h: Map<string, { failed: number; recovered: number; found: number }>;
  lastPassAt: number | null;
}

export interface ProviderSummary {
  name: string;
  url: string;
  scale_sets: number;
  /** Instances of the provider's scale sets in status `error`. */
  errored: number;
}

export interface ShimCallCounts {
  calls: number;
  errors: number;
}

export interface Overview {
  /** Ordered by entity, then name. */
  scaleSets: OverviewScaleSet[];
  /** By scale set id; a scale set without live instances has no entry. */
  instanceCounts: Map<string, InstanceCounts>;
  /** Jobs queued or waiting, by scale set id. */
  queuedJobs: Map<string, number>;
  credentials: CredentialHealthRow[];
  /** Every entity, by kind then name. */
  entities: OverviewEntity[];
  providers: ProviderSummary[];
  /** Shim calls over all operations, by provider name. */
  shimCalls: Map<string, ShimCallCounts>;
  /** Jobs queued or waiting that no scale set took. */
  unmatchedJobs: number;
  /** Jobs of any scale set that started in the last 24 hours (the queue time chart). */
  queueWaits: QueueWait[];
  /** The runners-by-state samples of the last 24 hours, summed over scale sets per slot. */
  samples: RunnerSample[];
  recovery: OverviewRecovery;
  /** This month's rows of `usage_days` (UTC), its first day to today: what it spent in Cloudflare's billing units. */
  usage: UsageRow[];
}

/**
 * Sums the `shim.calls` and `shim.errors` counters over operations, per provider. Counter names
 * are `<family>|<operation>|<provider>` (observability/op-counters.ts).
 */
export function shimCallsByProvider(counters: readonly { name: string; value: number }[]): Map<string, ShimCallCounts> {
  const byProvider = new Map<string, ShimCallCounts>();
  for (const r of counters) {
    const [family, , provider = ""] = r.name.split("|");
    const t = byProvider.get(provider) ?? { calls: 0, errors: 0 };
    if (family === "shim.calls") t.calls += r.value;
    if (family === "shim.errors") t.errors += r.value;
    byProvider.set(provider, t);
  }
  return byProvider;
}

/** Each entity with its pool's credential ids, in the order the pool rows come (oldest first). */
export function withPools(
  entities: readonly Omit<OverviewEntity, "pool">[],
  pools: readonly { entity_id: string; credential_id: string }[],
): OverviewEntity[] {
  const byEntity = new Map<string, string[]>();
  for (const p of pools) byEntity.set(p.entity_id, [...(byEntity.get(p.entity_id) ?? []), p.credential_id]);
  return entities.map((e) => ({ ...e, pool: byEntity.get(e.id) ?? [] }));
}

export async function overview(db: D1Database, now = Date.now()): Promise<Overview> {
  const since = now - CHART_WINDOW_MS;
  const month = monthOf(now);
  const [sets, counts, queued, creds, ents, pools, provs, calls, unmatched, waits, sampled, watches, usage, recovered, lastPass] =
    await db.batch([
      db.prepare(
        `SELECT s.id, s.name, s.enabled, s.max_runners, p.name AS provider,
              e.kind, ${ENTITY_NAME} AS entity
       FROM scale_sets s JOIN providers p ON p.id = s.provider_id JOIN entities e ON e.id = s.entity_id ORDER BY entity, s.name`,
      ),
      db.prepare(
        `SELECT scale_set_id,
              COUNT(*) AS live,
              SUM(CASE WHEN status = 'running' AND runner_status IN ('idle', 'online') AND job_id IS NULL THEN 1 ELSE 0 END) AS idle,
              SUM(CASE WHEN runner_status = 'active' OR job_id IS NOT NULL THEN 1 ELSE 0 END) AS busy,
              SUM(CASE WHEN status IN ('pending_create', 'creating') OR (status = 'running' AND runner_status IN ('pending', 'installing')) THEN 1 ELSE 0 END) AS starting,
              SUM(CASE WHEN status = 'error' THEN 1 ELSE 0 END) AS errored
       FROM instances WHERE status != 'deleted' GROUP BY scale_set_id`,
      ),
      db.prepare(
        `SELECT j.scale_set_id, COUNT(*) AS n FROM jobs j
        WHERE j.scale_set_id IN (SELECT id FROM scale_sets) AND j.status IN ('queued', 'waiting') AND NOT ${hasServingTwin()} GROUP BY 1`,
      ),
      db.prepare(
        `SELECT c.id, c.name, c.endpoint_name, c.auth_type, s.health, s.failure_reason, s.rate_limit_limit, s.rate_limit_remaining, s.rate_limit_reset_at, s.blocked_until
       FROM github_credentials c LEFT JOIN github_credential_state s ON s.credential_id = c.id ORDER BY c.name`,
      ),
      db.prepare(
        `SELECT e.id, e.kind, ${ENTITY_NAME} AS entity, e.endpoint_name, g.forge, e.credentials_id,
              CASE WHEN c.auth_type = 'app' AND c.webhook_secret_enc IS NOT NULL THEN c.app_id END AS app_webhook_id
       FROM entities e JOIN github_endpoints g ON g.name = e.endpoint_name JOIN github_credentials c ON c.id = e.credentials_id
       ORDER BY e.kind, entity`,
      ),
      db.prepare(`SELECT entity_id, credential_id FROM entity_credentials ORDER BY added_at, credential_id`),
      db.prepare(
        `SELECT p.name, p.url, (SELECT COUNT(*) FROM scale_sets s WHERE s.provider_id = p.id) AS scale_sets,
              (SELECT COUNT(*) FROM instances i JOIN scale_sets s ON s.id = i.scale_set_id WHERE s.provider_id = p.id AND i.status = 'error') AS errored
       FROM providers p ORDER BY p.name`,
      ),
      db.prepare(`SELECT name, value FROM counters WHERE name LIKE 'shim.%'`),
      db.prepare(
        `SELECT COUNT(*) AS n FROM jobs j WHERE j.scale_set_id IS NULL AND j.status IN ('queued', 'waiting') AND NOT ${hasServingTwin()}`,
      ),
      db.prepare(QUEUE_WAITS_ALL).bind(since),
      db
        .prepare(
          `SELECT ${SAMPLE_COLUMNS} FROM scale_set_samples WHERE at >= ? AND scale_set_id IN (SELECT id FROM scale_sets) GROUP BY at ORDER BY at`,
        )
        .bind(since),
      db.prepare("SELECT key, kind, entity_id, status, detail, status_since FROM delivery_watches ORDER BY key"),
      usageRangeStatement(db, month.from, month.to),
      ...recoveryDigestStatements(db, since),
    ]);
  return {
    scaleSets: rows<Omit<OverviewScaleSet, "enabled"> & { enabled: number }>(sets).map((s) => ({ ...s, enabled: Boolean(s.enabled) })),
    instanceCounts: new Map(rows<InstanceCounts & { scale_set_id: string }>(counts).map(({ scale_set_id, ...n }) => [scale_set_id, n])),
    queuedJobs: new Map(rows<{ scale_set_id: string; n: number }>(queued).map((r) => [r.scale_set_id, r.n])),
    credentials: rows<CredentialHealthRow>(creds),
    entities: withPools(rows<Omit<OverviewEntity, "pool">>(ents), rows<{ entity_id: string; credential_id: string }>(pools)),
    providers: rows<ProviderSummary>(provs),
    shimCalls: shimCallsByProvider(rows<{ name: string; value: number }>(calls)),
    unmatchedJobs: rows<{ n: number }>(unmatched)[0]?.n ?? 0,
    queueWaits: queueWaits(waits),
    samples: samples(sampled),
    recovery: (() => {
      const digest = parseRecoveryDigest(recovered, lastPass);
      return {
        watches: rows<OverviewRecovery["watches"][number]>(watches),
        last24h: digest.byEntity,
        lastPassAt: digest.lastPass?.at ?? null,
      };
    })(),
    usage: rows<UsageRow>(usage),
  };
}
