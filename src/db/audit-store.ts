import { and, desc, eq, gte, lt, or, type SQL, sql } from "drizzle-orm";
import type { Db } from "./client";
import { auditLog } from "./schema";

/** D1 access for the audit trail: one insert per admin write, and paged reads newest first. */

export type AuditRow = typeof auditLog.$inferSelect;
export type NewAuditRow = typeof auditLog.$inferInsert;

export async function insertAudit(db: Db, row: NewAuditRow): Promise<void> {
  await db.insert(auditLog).values(row);
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
