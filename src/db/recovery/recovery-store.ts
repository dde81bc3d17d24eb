import { LAST_PASS_REFRESH_MS } from "../../recovery/pass-timing";
import type { EntityKind } from "../directory/schema";
import type { Forge } from "../github/schema";
import type { JobStatus } from "../jobs/schema";
import type { BackstopState, RecoveryOutcome, WatchKind } from "./schema";

/**
 * Delivery recovery's reads and writes (src/recovery/): what a pass needs in one round trip,
 * which GUIDs are known already, a backstop's view of an entity's jobs, and everything a pass
 * learned written back in one batch. Written only when something changed: a pass that found
 * nothing new writes the one row saying when it ran.
 */

export interface RecoveryEntityRow {
  id: string;
  kind: EntityKind;
  owner: string;
  name: string;
  endpointName: string;
  forge: Forge;
  credentialsId: string;
  enterprise: string | null;
  useParentScaleSets: boolean;
  /** Its credentials are an App installation whose App's webhook secret is held here. */
  appId: number | null;
  /** It has an enabled scale set fed by webhooks. */
  ownScaleSets: boolean;
}

export interface EndpointRow {
  name: string;
  forge: Forge;
  baseUrl: string;
  apiBaseUrl: string;
}

export interface WatchRow {
  key: string;
  kind: WatchKind;
  endpointName: string;
  entityId: string | null;
  appId: number | null;
  hookId: number | null;
  hookCheckedAt: number | null;
  seenThrough: number | null;
  walkCursor: string | null;
  walkUntil: number | null;
  status: string;
  detail: string | null;
  statusSince: number;
  backstopState: BackstopState | null;
}

export interface RecoveryRow {
  key: string;
  watchKey: string;
  entityId: string | null;
  means: "ingest" | "backstop";
  githubId: number | null;
  event: string | null;
  action: string | null;
  deliveredAt: number | null;
  statusCode: number | null;
  seenAt: number;
  outcome: RecoveryOutcome;
  detail: string | null;
  jobId: number | null;
  attempts: number;
}

export interface RecoveryInputs {
  entities: RecoveryEntityRow[];
  endpoints: EndpointRow[];
  watches: WatchRow[];
  /** Deliveries seen earlier and still to fetch, oldest first. */
  pending: RecoveryRow[];
  /** Enabled scale sets with no machine and a job queued in the nudge window (see UNNUDGED): each may have missed its nudge. */
  unnudged: string[];
}

/**
 * A job's delivery nudges its scale set at once (three tries). A scale set whose every nudge
 * failed finds the job at its next tick, which for a scale set without machines for an hour is
 * 30 minutes away (scaleset/idle-tick.ts): the pass nudges those with a job queued between ?2
 * (a minute ago: its own nudge had its chance) and ?1 (the quiet tick: older ones a tick found),
 * and without a live machine (the others tick every 30 s). Through (scale_set_id, status) and
 * (scale_set_id, deleted_at): it reads the queued jobs of the window, not the history.
 */
const UNNUDGED = `SELECT s.id FROM scale_sets s
 WHERE s.enabled = 1
   AND EXISTS (SELECT 1 FROM jobs j WHERE j.scale_set_id = s.id AND j.status = 'queued' AND j.refusal IS NULL
                 AND j.updated_at BETWEEN ?1 AND ?2)
   AND NOT EXISTS (SELECT 1 FROM instances i WHERE i.scale_set_id = s.id AND i.deleted_at IS NULL)
 ORDER BY s.id`;

/** The window UNNUDGED looks at: a job queued at least `afterMs` and at most `withinMs` ago. */
export const UNNUDGED_WINDOW = { afterMs: 60_000, withinMs: 30 * 60_000 };

/** Pending rows one pass loads at most: the rest wait for the next. */
export const MAX_PENDING_LOADED = 200;

const num = (v: unknown) => (v === null || v === undefined ? null : Number(v));

const watchOf = (r: Record<string, unknown>): WatchRow => ({
  key: String(r.key),
  kind: r.kind as WatchKind,
  endpointName: String(r.endpoint_name),
  entityId: (r.entity_id as string | null) ?? null,
  appId: num(r.app_id),
  hookId: num(r.hook_id),
  hookCheckedAt: num(r.hook_checked_at),
  seenThrough: num(r.seen_through),
  walkCursor: (r.walk_cursor as string | null) ?? null,
  walkUntil: num(r.walk_until),
  status: String(r.status),
  detail: (r.detail as string | null) ?? null,
  statusSince: Number(r.status_since),
  backstopState: r.backstop_state ? (JSON.parse(String(r.backstop_state)) as BackstopState) : null,
});

export const recoveryOf = (r: Record<string, unknown>): RecoveryRow => ({
  key: String(r.key),
  watchKey: String(r.watch_key),
  entityId: (r.entity_id as string | null) ?? null,
  means: r.means as RecoveryRow["means"],
  githubId: num(r.github_id),
  event: (r.event as string | null) ?? null,
  action: (r.action as string | null) ?? null,
  deliveredAt: num(r.delivered_at),
  statusCode: num(r.status_code),
  seenAt: Number(r.seen_at),
  outcome: r.outcome as RecoveryOutcome,
  detail: (r.detail as string | null) ?? null,
  jobId: num(r.job_id),
  attempts: Number(r.attempts ?? 0),
});

/** Everything a pass starts from: one round trip. */
export async function loadRecoveryInputs(db: D1Database, now = Date.now()): Promise<RecoveryInputs> {
  const [entities, endpoints, watches, pending, unnudged] = await db.batch<Record<string, unknown>>([
    db.prepare(
      `SELECT e.id, e.kind, e.owner, e.name, e.endpoint_name, ep.forge, e.credentials_id, e.enterprise, e.use_parent_scale_sets,
              CASE WHEN c.auth_type = 'app' AND c.webhook_secret_enc IS NOT NULL THEN c.app_id END AS app_id,
              EXISTS (SELECT 1 FROM scale_sets s WHERE s.entity_id = e.id AND s.enabled = 1 AND s.intake = 'webhook') AS own_sets
         FROM entities e
         JOIN github_endpoints ep ON ep.name = e.endpoint_name
         JOIN github_credentials c ON c.id = e.credentials_id
        ORDER BY e.id`,
    ),
    db.prepare("SELECT name, forge, base_url, api_base_url FROM github_endpoints ORDER BY name"),
    db.prepare("SELECT * FROM delivery_watches ORDER BY key"),
    db.prepare(`SELECT * FROM delivery_recoveries WHERE outcome = 'pending' ORDER BY delivered_at, key LIMIT ${MAX_PENDING_LOADED}`),
    db.prepare(UNNUDGED).bind(now - UNNUDGED_WINDOW.withinMs, now - UNNUDGED_WINDOW.afterMs),
  ]);
  return {
    entities: entities!.results.map((r) => ({
      id: String(r.id),
      kind: r.kind as EntityKind,
      owner: String(r.owner),
      name: String(r.name ?? ""),
      endpointName: String(r.endpoint_name),
      forge: (r.forge as Forge) ?? "github",
      credentialsId: String(r.credentials_id),
      enterprise: (r.enterprise as string | null) ?? null,
      useParentScaleSets: Boolean(r.use_parent_scale_sets),
      appId: num(r.app_id),
      ownScaleSets: Boolean(r.own_sets),
    })),
    endpoints: endpoints!.results.map((r) => ({
      name: String(r.name),
      forge: (r.forge as Forge) ?? "github",
      baseUrl: String(r.base_url),
      apiBaseUrl: String(r.api_base_url),
    })),
    watches: watches!.results.map(watchOf),
    pending: pending!.results.map(recoveryOf),
    unnudged: unnudged!.results.map((r) => String(r.id)),
  };
}

/** Of these GUIDs, the ones a delivery was stored under, and the ones recovery has a row for. One round trip. */
export async function knownGuids(db: D1Database, guids: readonly string[]): Promise<{ stored: Set<string>; seen: Set<string> }> {
  if (guids.length === 0) return { stored: new Set(), seen: new Set() };
  const list = JSON.stringify([...new Set(guids)]);
  const [stored, seen] = await db.batch<{ k: string }>([
    db.prepare("SELECT delivery_id AS k FROM webhook_deliveries WHERE delivery_id IN (SELECT value FROM json_each(?))").bind(list),
    db.prepare("SELECT key AS k FROM delivery_recoveries WHERE key IN (SELECT value FROM json_each(?))").bind(list),
  ]);
  return { stored: new Set(stored!.results.map((r) => r.k)), seen: new Set(seen!.results.map((r) => r.k)) };
}

/** What a backstop pass compares the forge's listings with: the entity's open jobs, its recently active repositories, and (an enterprise) its organizations registered here. */
export async function backstopView(
  db: D1Database,
  entity: { id: string; kind: EntityKind; owner: string; endpointName: string },
  activeSince: number,
): Promise<{
  held: { id: number; runId: number; repository: string; status: JobStatus; createdAt: number }[];
  repositories: string[];
  organizations: string[];
}> {
  const [held, repos, orgs] = await db.batch<Record<string, unknown>>([
    db
      .prepare(
        `SELECT id, run_id, repository, status, created_at FROM jobs
          WHERE entity_id = ? AND source = 'webhook' AND status IN ('queued', 'waiting', 'in_progress')
          ORDER BY created_at LIMIT 500`,
      )
      .bind(entity.id),
    db
      .prepare(
        `SELECT repository, MAX(updated_at) AS at FROM jobs WHERE entity_id = ? AND source = 'webhook' AND updated_at >= ?
          GROUP BY repository ORDER BY at DESC, repository LIMIT 100`,
      )
      .bind(entity.id, activeSince),
    db
      .prepare(
        "SELECT owner FROM entities WHERE kind = 'organization' AND endpoint_name = ? AND lower(enterprise) = lower(?) ORDER BY owner",
      )
      .bind(entity.endpointName, entity.kind === "enterprise" ? entity.owner : ""),
  ]);
  return {
    held: held!.results.map((r) => ({
      id: Number(r.id),
      runId: Number(r.run_id),
      repository: String(r.repository),
      status: r.status as JobStatus,
      createdAt: Number(r.created_at),
    })),
    repositories: repos!.results.map((r) => String(r.repository)),
    organizations: orgs!.results.map((r) => String(r.owner)),
  };
}

/**
 * An upsert of rows that travel as one JSON parameter (json_each, `?1`; `?2` is now, for
 * updated_at): one statement however many rows, under D1's 100 bound parameters, one query of the
 * invocation's budget. `columns` maps each column to its field in the rows; `onConflict`, what a
 * row already there takes from the new one.
 */
function jsonUpsert(table: string, columns: Record<string, string>, onConflict: string): string {
  const names = Object.keys(columns);
  return `INSERT INTO ${table} (${names.join(", ")}, updated_at)
SELECT ${names.map((c) => `json_extract(j.value, '$.${columns[c]}')`).join(", ")}, ?2
FROM json_each(?1) j WHERE true
ON CONFLICT(key) DO UPDATE SET ${onConflict}, updated_at = excluded.updated_at`;
}

const WATCH_COLUMNS = {
  key: "key",
  kind: "kind",
  endpoint_name: "endpointName",
  entity_id: "entityId",
  app_id: "appId",
  hook_id: "hookId",
  hook_checked_at: "hookCheckedAt",
  seen_through: "seenThrough",
  walk_cursor: "walkCursor",
  walk_until: "walkUntil",
  status: "status",
  detail: "detail",
  status_since: "statusSince",
  backstop_state: "backstopState",
};
// A watch row is the pass's whole view of it: every column is replaced.
const UPSERT_WATCHES = jsonUpsert(
  "delivery_watches",
  WATCH_COLUMNS,
  Object.keys(WATCH_COLUMNS)
    .filter((c) => c !== "key")
    .map((c) => `${c} = excluded.${c}`)
    .join(", "),
);

// What a failed delivery was when first seen stays; what became of it moves on.
const UPSERT_RECOVERIES = jsonUpsert(
  "delivery_recoveries",
  {
    key: "key",
    watch_key: "watchKey",
    entity_id: "entityId",
    means: "means",
    github_id: "githubId",
    event: "event",
    action: "action",
    delivered_at: "deliveredAt",
    status_code: "statusCode",
    seen_at: "seenAt",
    outcome: "outcome",
    detail: "detail",
    job_id: "jobId",
    attempts: "attempts",
  },
  "outcome = excluded.outcome, detail = excluded.detail, job_id = COALESCE(excluded.job_id, job_id), attempts = excluded.attempts, entity_id = COALESCE(excluded.entity_id, entity_id)",
);

// Bound ?6: the pass writes something else too; otherwise the record stays until it is
// LAST_PASS_REFRESH_MS old (`?7`).
const SAVE_LAST_PASS = `INSERT INTO recovery_last_pass (id, at, duration_ms, calls, watches, next_at) VALUES (1, ?1, ?2, ?3, ?4, ?5)
ON CONFLICT(id) DO UPDATE SET at = excluded.at, duration_ms = excluded.duration_ms, calls = excluded.calls,
  watches = excluded.watches, next_at = excluded.next_at
WHERE ?6 OR excluded.at - recovery_last_pass.at >= ?7`;

export interface PassWrites {
  watches: WatchRow[];
  /** Watches no longer needed (their entity or App went): their rows go. */
  dropWatches: string[];
  recoveries: RecoveryRow[];
  lastPass: { at: number; durationMs: number; calls: number; watches: number; nextAt: number };
  /** Counters that ride along (op-counters drain). */
  alongside: D1PreparedStatement[];
}

/** Everything a pass learned, in one batch of at most five statements and the counters. */
export async function savePass(db: D1Database, w: PassWrites, now: number): Promise<void> {
  const statements: D1PreparedStatement[] = [];
  if (w.watches.length) {
    const rows = w.watches.map((r) => ({ ...r, backstopState: r.backstopState ? JSON.stringify(r.backstopState) : null }));
    statements.push(db.prepare(UPSERT_WATCHES).bind(JSON.stringify(rows), now));
  }
  if (w.dropWatches.length) {
    statements.push(
      db.prepare("DELETE FROM delivery_watches WHERE key IN (SELECT value FROM json_each(?))").bind(JSON.stringify(w.dropWatches)),
    );
  }
  if (w.recoveries.length) statements.push(db.prepare(UPSERT_RECOVERIES).bind(JSON.stringify(w.recoveries), now));
  const p = w.lastPass;
  const news = statements.length > 0 || w.alongside.length > 0 ? 1 : 0;
  statements.push(db.prepare(SAVE_LAST_PASS).bind(p.at, p.durationMs, p.calls, p.watches, p.nextAt, news, LAST_PASS_REFRESH_MS));
  statements.push(...w.alongside);
  await db.batch(statements);
}

export interface RecoveryDigest {
  /** Per entity, the last 24 hours: failed deliveries seen, of them recovered, and jobs the backstop found. */
  byEntity: Map<string, { failed: number; recovered: number; found: number }>;
  lastPass: { at: number; durationMs: number; calls: number; watches: number } | null;
}

/**
 * The digest's two statements, for a caller's own batch (the dashboard's overview reads them with
 * the rest of its page); `parseRecoveryDigest` reads their results.
 */
export function recoveryDigestStatements(db: D1Database, since: number): [D1PreparedStatement, D1PreparedStatement] {
  return [
    db
      .prepare(
        `SELECT entity_id, SUM(means = 'ingest') AS failed, SUM(means = 'ingest' AND outcome = 'recovered') AS recovered,
                SUM(means = 'backstop') AS found
           FROM delivery_recoveries WHERE seen_at >= ? AND entity_id IS NOT NULL GROUP BY entity_id`,
      )
      .bind(since),
    db.prepare("SELECT at, duration_ms, calls, watches FROM recovery_last_pass WHERE id = 1"),
  ];
}

export function parseRecoveryDigest(counts: D1Result | undefined, last: D1Result | undefined): RecoveryDigest {
  const l = last?.results[0] as Record<string, unknown> | undefined;
  return {
    byEntity: new Map(
      ((counts?.results ?? []) as Record<string, unknown>[]).map((r) => [
        String(r.entity_id),
        { failed: Number(r.failed ?? 0), recovered: Number(r.recovered ?? 0), found: Number(r.found ?? 0) },
      ]),
    ),
    lastPass: l ? { at: Number(l.at), durationMs: Number(l.duration_ms), calls: Number(l.calls), watches: Number(l.watches) } : null,
  };
}

/** What the setup check and GET /recovery show of recovery: one round trip. */
export async function readRecoveryDigest(db: D1Database, since: number): Promise<RecoveryDigest> {
  const [counts, last] = await db.batch(recoveryDigestStatements(db, since));
  return parseRecoveryDigest(counts, last);
}
