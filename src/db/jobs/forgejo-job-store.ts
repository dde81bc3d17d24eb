/**
 * D1 access for the Forgejo poller (src/forges/forgejo/): the jobs it takes (source `poll`,
 * keyed like every job by entity, source and Forgejo's job id, so no job is taken twice however
 * many scale sets poll the same scope or how often an object restarts) and what becomes of them.
 */

export interface PolledJob {
  id: number;
  runId: number;
  attempt: number;
  name: string;
  labels: string[];
  /** `owner/name` when the entity is the repository; else Forgejo's repository id (`repo_id:<n>`): its list names no repository. */
  repository: string;
  owner: string;
}

/**
 * Writes the jobs this scale set takes (a row already there, by this or another scale set, is
 * left as it is) and answers the row of each that is this scale set's: a job another scale set
 * took first is not in the answer.
 */
export async function recordPolledJobs(
  db: D1Database,
  input: { entityId: string; scaleSetId: string; jobs: readonly PolledJob[]; at: number },
): Promise<Map<number, number>> {
  if (!input.jobs.length) return new Map();
  const inserts = input.jobs.map((j) =>
    db
      .prepare(
        `INSERT INTO jobs (source, id, run_id, run_attempt, name, repository, owner, labels, status, entity_id, scale_set_id, queued_at, created_at, updated_at)
         VALUES ('poll', ?1, ?2, ?3, ?4, ?5, ?6, ?7, 'queued', ?8, ?9, ?10, ?10, ?10)
         ON CONFLICT(entity_id, source, id) DO NOTHING`,
      )
      .bind(j.id, j.runId, j.attempt, j.name, j.repository, j.owner, JSON.stringify(j.labels), input.entityId, input.scaleSetId, input.at),
  );
  const ids = JSON.stringify(input.jobs.map((j) => j.id));
  const read = db
    .prepare(
      `SELECT seq, id FROM jobs WHERE entity_id = ?1 AND source = 'poll' AND scale_set_id = ?2 AND status IN ('queued', 'waiting')
          AND id IN (SELECT value FROM json_each(?3))`,
    )
    .bind(input.entityId, input.scaleSetId, ids);
  const results = await db.batch([...inserts, read]);
  const rows = (results[results.length - 1]!.results ?? []) as { seq: number; id: number }[];
  return new Map(rows.map((r) => [r.id, r.seq]));
}

/** What a polled job became: its runner took it, or it is over (left the queue without us, or done). */
export interface PolledJobChange {
  seq: number;
  status: "in_progress" | "completed";
  /** Why it completed, when it did not run on our runner (`left_queue`). */
  conclusion: string | null;
  /** The instance to let go of the job (it never took it), if any. */
  detach: string | null;
}

/**
 * Applies what the poller saw, in one batch: job rows move on (never back: a completed row stays
 * so), and the runners a job left without are detached from it (their runner, never used, is
 * then removed at Forgejo like any idle runner's).
 */
export async function applyPolledJobChanges(
  db: D1Database,
  scaleSetId: string,
  changes: readonly PolledJobChange[],
  at: number,
): Promise<void> {
  if (!changes.length) return;
  const statements: D1PreparedStatement[] = [];
  for (const c of changes) {
    statements.push(
      db
        .prepare(
          `UPDATE jobs SET status = ?2, conclusion = coalesce(?3, conclusion), updated_at = ?4,
                  started_at = CASE WHEN ?2 = 'in_progress' THEN coalesce(started_at, ?4) ELSE started_at END,
                  completed_at = CASE WHEN ?2 = 'completed' THEN coalesce(completed_at, ?4) ELSE completed_at END
            WHERE seq = ?1 AND status != 'completed'`,
        )
        .bind(c.seq, c.status, c.conclusion, at),
    );
    if (c.detach)
      statements.push(
        db
          .prepare(
            `UPDATE instances SET job_id = NULL, job_seq = NULL, forge_job_handle = NULL, updated_at = ?3
              WHERE name = ?1 AND scale_set_id = ?2 AND job_seq = ?4`,
          )
          .bind(c.detach, scaleSetId, at, c.seq),
      );
  }
  await db.batch(statements);
}

/** The handle of the job an instance's Forgejo runner was made for, or null (none, or let go). */
export async function instanceJobHandle(db: D1Database, instanceId: string): Promise<string | null> {
  const row = await db
    .prepare("SELECT forge_job_handle FROM instances WHERE id = ?")
    .bind(instanceId)
    .first<{ forge_job_handle: string | null }>();
  return row?.forge_job_handle ?? null;
}
