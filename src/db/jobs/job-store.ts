import { and, desc, eq, isNull, lt, type SQL } from "drizzle-orm";
import type { ScopedScaleSet, WaitingJob } from "../../intake/routing";
import type { Db } from "../client";
import { type JobStatus, jobs } from "./schema";

/**
 * D1 access for workflow jobs outside the webhook intake (delivery-store.ts writes what a
 * delivery says): routing waiting jobs to scale sets, the corrections a re-check against
 * GitHub makes, and the admin API's listing.
 */

/** At most this many waiting jobs are looked at per change (the oldest first). */
const MAX_WAITING_JOBS = 1_000;
/** IDs per UPDATE statement (D1 binds at most 100 parameters). */
const CHUNK = 90;

/**
 * The waiting unmatched jobs an entity's scale sets might serve, and every scale set on the
 * entity's endpoint, in one D1 round trip. The jobs are those it reported itself, and those
 * reported by entities registered to use their parents' scale sets when it is such a parent
 * (intake/routing.ts Reporter); the oldest first, at most MAX_WAITING_JOBS.
 */
export async function readWaitingJobs(db: D1Database, entityId: string): Promise<{ jobs: WaitingJob[]; scaleSets: ScopedScaleSet[] }> {
  const [jobRows, setRows] = await db.batch<Record<string, any>>([
    db
      .prepare(
        `WITH me AS (SELECT id, kind, owner, endpoint_name FROM entities WHERE id = ?1)
         SELECT j.seq, j.labels, r.id AS r_id, r.kind AS r_kind, r.owner AS r_owner,
                r.use_parent_scale_sets AS r_parents, r.enterprise AS r_enterprise, o.enterprise AS o_enterprise
           FROM jobs j JOIN entities r ON r.id = j.entity_id
           LEFT JOIN entities o ON r.kind = 'repository' AND o.endpoint_name = r.endpoint_name
                                AND o.lookup_key = 'organization:' || lower(r.owner)
           JOIN me ON r.endpoint_name = me.endpoint_name
          WHERE j.scale_set_id IS NULL AND j.status IN ('queued', 'waiting') AND j.source = 'webhook'
            AND (r.id = me.id
              OR (r.use_parent_scale_sets = 1 AND (
                   (me.kind = 'organization' AND r.kind = 'repository' AND lower(r.owner) = lower(me.owner))
                OR (me.kind = 'enterprise' AND lower(coalesce(r.enterprise, o.enterprise)) = lower(me.owner)))))
          ORDER BY j.seq LIMIT ${MAX_WAITING_JOBS}`,
      )
      .bind(entityId),
    db
      .prepare(
        `SELECT s.id, s.entity_id, s.labels, s.enabled AND s.intake = 'webhook' AS enabled, s.priority, s.created_at, e.lookup_key, json_extract(s.shape, '$.key') AS shape_key
           FROM scale_sets s JOIN entities e ON e.id = s.entity_id
          WHERE e.endpoint_name = (SELECT endpoint_name FROM entities WHERE id = ?)`,
      )
      .bind(entityId),
  ]);
  const jobs: WaitingJob[] = jobRows!.results.map((r) => ({
    seq: r.seq,
    labels: JSON.parse(r.labels),
    reporter: {
      id: r.r_id,
      kind: r.r_kind,
      owner: r.r_owner,
      useParentScaleSets: r.r_parents === 1,
      enterprise: r.r_enterprise,
      organizationEnterprise: r.o_enterprise ?? null,
    },
  }));
  if (!jobs.length) return { jobs, scaleSets: [] };
  const scaleSets: ScopedScaleSet[] = setRows!.results.map((r) => ({
    id: r.id,
    entityId: r.entity_id,
    labels: JSON.parse(r.labels),
    enabled: r.enabled === 1,
    priority: r.priority,
    createdAt: r.created_at,
    lookupKey: r.lookup_key,
    shapeKey: r.shape_key ?? null,
  }));
  return { jobs, scaleSets };
}

/**
 * Gives waiting jobs (by row: jobs.seq) the scale sets chosen for them, in one D1 round trip (none when there is
 * nothing to give). Only jobs still unmatched are claimed, so an intake that routed one
 * meanwhile wins, and only while the scale set is still enabled. Returns how many jobs each
 * scale set got.
 */
export async function claimWaitingJobs(
  db: D1Database,
  routes: ReadonlyMap<number, { id: string }>,
  now: number,
): Promise<Map<string, number>> {
  const idsBySet = new Map<string, number[]>();
  for (const [seq, s] of routes) idsBySet.set(s.id, [...(idsBySet.get(s.id) ?? []), seq]);
  const statements: D1PreparedStatement[] = [];
  const claimedBy: string[] = [];
  for (const [setId, ids] of idsBySet) {
    for (let i = 0; i < ids.length; i += CHUNK) {
      const chunk = ids.slice(i, i + CHUNK);
      statements.push(
        db
          .prepare(
            `UPDATE jobs SET scale_set_id = ?, updated_at = ?
              WHERE scale_set_id IS NULL AND seq IN (${chunk.map(() => "?").join(", ")})
                AND EXISTS (SELECT 1 FROM scale_sets WHERE id = ?1 AND enabled = 1 AND intake = 'webhook')`,
          )
          .bind(setId, now, ...chunk),
      );
      claimedBy.push(setId);
    }
  }
  const counts = new Map<string, number>();
  if (!statements.length) return counts;
  for (const [i, r] of (await db.batch(statements)).entries()) {
    counts.set(claimedBy[i]!, (counts.get(claimedBy[i]!) ?? 0) + (r.meta.changes ?? 0));
  }
  return counts;
}

/**
 * Moves jobs forward to what GitHub says they are, never backward (a webhook may have done
 * it meanwhile): the statement only touches rows still queued or waiting, and running rows
 * GitHub says ended.
 */
export async function applyJobCorrections(
  db: D1Database,
  corrections: { seq: number; status: "in_progress" | "completed"; conclusion: string | null }[],
  now: number,
): Promise<void> {
  if (!corrections.length) return;
  await db
    .prepare(
      `UPDATE jobs SET
         status = json_extract(c.value, '$.status'),
         conclusion = coalesce(json_extract(c.value, '$.conclusion'), jobs.conclusion),
         started_at = coalesce(jobs.started_at, ?2),
         completed_at = CASE WHEN json_extract(c.value, '$.status') = 'completed' THEN coalesce(jobs.completed_at, ?2) ELSE jobs.completed_at END,
         updated_at = ?2
       FROM json_each(?1) AS c
       WHERE jobs.seq = json_extract(c.value, '$.seq')
         AND (jobs.status IN ('queued', 'waiting') OR (jobs.status = 'in_progress' AND json_extract(c.value, '$.status') = 'completed'))`,
    )
    .bind(JSON.stringify(corrections), now)
    .run();
}

export type JobRow = typeof jobs.$inferSelect;

export interface JobFilter {
  status?: JobStatus | undefined;
  scaleSetId?: string | undefined;
  /** Only jobs no scale set matches. */
  unmatched?: boolean | undefined;
  /** Only rows older (lower seq) than this one: the previous page's cursor. */
  before?: number | undefined;
}

/** A page of jobs, the latest to arrive first, and the cursor of the next page (null on the last). */
export async function jobPage(db: Db, filter: JobFilter, limit: number): Promise<{ jobs: JobRow[]; nextCursor: number | null }> {
  const filters: SQL[] = [];
  if (filter.status) filters.push(eq(jobs.status, filter.status));
  if (filter.scaleSetId) filters.push(eq(jobs.scaleSetId, filter.scaleSetId));
  if (filter.unmatched) filters.push(isNull(jobs.scaleSetId));
  if (filter.before !== undefined) filters.push(lt(jobs.seq, filter.before));
  // One row more than asked says whether there is a next page.
  const rows = await db
    .select()
    .from(jobs)
    .where(and(...filters))
    .orderBy(desc(jobs.seq))
    .limit(limit + 1);
  const page = rows.slice(0, limit);
  return { jobs: page, nextCursor: rows.length > limit ? page[page.length - 1]!.seq : null };
}
