import { and, desc, eq, gte, lt, or, type SQL, sql } from "drizzle-orm";
import type { Db } from "../client";
import { auditLog } from "./schema";

/**
 * D1 access for the audit trail: one insert per admin write (a refused one throttled per actor,
 * with the count of those not kept), and paged reads newest first.
 */

export type AuditRow = typeof auditLog.$inferSelect;
export type NewAuditRow = typeof auditLog.$inferInsert;

export async function insertAudit(db: Db, row: NewAuditRow): Promise<void> {
  await db.insert(auditLog).values(row);
}

/** The `counters` family of refusals the throttle did not keep: `audit.refusals_suppressed|<actor>` (/metrics). */
export const SUPPRESSED_REFUSALS = "audit.refusals_suppressed";
export const suppressedRefusalsCounter = (actor: string) => `${SUPPRESSED_REFUSALS}|${actor}`;

export type RefusalRow = Required<
  Pick<NewAuditRow, "at" | "actor" | "via" | "method" | "route" | "path" | "resource" | "status" | "requestId">
> & {
  /** `{code, error}` of the answer (src/audit/refusal.ts). */
  refusal: string;
};

/**
 * ?1 actor, ?2 start of the window (exclusive). Its status term is audit_log_refused_idx's WHERE
 * word for word, so SQLite counts from that partial index: a range of at most a few rows,
 * however many entries the actor has otherwise (test/worker/audit-refusals.test.ts checks the plan).
 */
export const REFUSED_IN_WINDOW = "SELECT count(*) FROM audit_log WHERE actor = ?1 AND at > ?2 AND status BETWEEN 400 AND 499";

// ?3 counter, ?4 now, ?5 limit: counts the refusal when the actor's window is full.
const COUNT_SUPPRESSED = `INSERT INTO counters (name, value, updated_at)
SELECT ?3, 1, ?4 WHERE (${REFUSED_IN_WINDOW}) >= ?5
ON CONFLICT(name) DO UPDATE SET value = value + 1, updated_at = excluded.updated_at`;

// ?3 limit, then the row: records the refusal while the actor's window has room.
const INSERT_REFUSAL = `INSERT INTO audit_log (actor, at, via, method, route, path, resource, status, request_id, refusal)
SELECT ?1, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12 WHERE (${REFUSED_IN_WINDOW}) < ?3`;

/**
 * Records a refused write (`row.status` a 4xx) unless its actor already has `limit` refused
 * entries newer than `windowStart`; then it only adds one to the actor's suppressed counter.
 * One batch: one round trip and one transaction, so the check and the insert cannot interleave
 * with another isolate's, and the limit holds across isolates. The counter statement runs
 * first; it writes no audit row, so both statements see the same count.
 *
 * The count lives in D1 rather than in the isolate's op counters: those are written only when a
 * request calls out or a reconcile runs, so an isolate busy refusing would hold them until it is
 * evicted. The counter is one row per actor (a bounded set: see /metrics), whatever the rate.
 */
export async function insertRefusal(d1: D1Database, row: RefusalRow, throttle: { windowStart: number; limit: number }): Promise<void> {
  await d1.batch([
    d1.prepare(COUNT_SUPPRESSED).bind(row.actor, throttle.windowStart, suppressedRefusalsCounter(row.actor), row.at, throttle.limit),
    d1
      .prepare(INSERT_REFUSAL)
      .bind(
        row.actor,
        throttle.windowStart,
        throttle.limit,
        row.at,
        row.via,
        row.method,
        row.route,
        row.path,
        row.resource,
        row.status,
        row.requestId,
        row.refusal,
      ),
  ]);
}

export interface AuditFilter {
  actor?: string;
  /** A resource id or name (exact), or a path prefix when it starts with `/` (e.g. `/api/v1/providers`). */
  resource?: string;
  method?: string;
  status?: number;
  /** Unix ms, inclusive. */
  since?: number;
  /** Unix ms, exclusive. */
  until?: number;
  /** Only entries older than this id (the previous page's cursor). */
  before?: number;
}

const escapeLike = (s: string) => s.replace(/[\\%_]/g, (c) => `\\${c}`);

export async function auditPage(db: Db, filter: AuditFilter, limit: number): Promise<{ entries: AuditRow[]; nextCursor: number | null }> {
  const filters: SQL[] = [];
  if (filter.actor !== undefined) filters.push(eq(auditLog.actor, filter.actor));
  if (filter.resource !== undefined) {
    filters.push(
      filter.resource.startsWith("/")
        ? sql`${auditLog.path} LIKE ${`${escapeLike(filter.resource)}%`} ESCAPE '\\'`
        : or(eq(auditLog.resource, filter.resource), eq(auditLog.path, filter.resource))!,
    );
  }
  if (filter.method !== undefined) filters.push(eq(auditLog.method, filter.method));
  if (filter.status !== undefined) filters.push(eq(auditLog.status, filter.status));
  if (filter.since !== undefined) filters.push(gte(auditLog.at, filter.since));
  if (filter.until !== undefined) filters.push(lt(auditLog.at, filter.until));
  if (filter.before !== undefined) filters.push(lt(auditLog.id, filter.before));
  // One row more than asked says whether there is a next page.
  const rows = await db
    .select()
    .from(auditLog)
    .where(and(...filters))
    .orderBy(desc(auditLog.id))
    .limit(limit + 1);
  const entries = rows.slice(0, limit);
  return { entries, nextCursor: rows.length > limit ? entries[entries.length - 1]!.id : null };
}
