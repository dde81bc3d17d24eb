import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { insertInstance, seed } from "./helpers";

// Migration 0018 rebuilds `jobs` keyed by (entity, source, id) and links instances to rows: run
// here on the data a deployment holds before it (the file's D1 is put back into 0017's shape).

const OLD_JOBS = `CREATE TABLE jobs (
  id integer PRIMARY KEY NOT NULL, run_id integer NOT NULL, run_attempt integer DEFAULT 1 NOT NULL, name text DEFAULT '' NOT NULL,
  workflow_name text, repository text NOT NULL, owner text NOT NULL, labels text NOT NULL, status text NOT NULL, conclusion text,
  runner_name text, runner_id integer, entity_id text, scale_set_id text, queued_at integer, started_at integer, completed_at integer,
  created_at integer NOT NULL, updated_at integer NOT NULL,
  FOREIGN KEY (entity_id) REFERENCES entities(id) ON UPDATE no action ON DELETE set null,
  FOREIGN KEY (scale_set_id) REFERENCES scale_sets(id) ON UPDATE no action ON DELETE set null)`;

describe("migration 0018 (jobs by entity)", () => {
  it("keeps every job, tells the scale set API's rows apart, and links instances to their rows", async () => {
    const repo = await seed.repository();
    const hooked = await seed.scaleSet(`repositories/${repo.id}`);
    const pulled = await seed.scaleSet(`repositories/${repo.id}`);
    await env.DB.prepare("UPDATE scale_sets SET intake = 'scaleset_api' WHERE id = ?").bind(pulled.id).run();

    // Back to 0017's shape.
    await env.DB.batch([
      env.DB.prepare("DROP INDEX IF EXISTS instances_job_seq_idx"),
      env.DB.prepare("ALTER TABLE instances DROP COLUMN job_seq"),
      env.DB.prepare("DROP TABLE jobs"),
      env.DB.prepare(OLD_JOBS),
    ]);
    const job = env.DB.prepare(
      `INSERT INTO jobs (id, run_id, repository, owner, labels, status, entity_id, scale_set_id, runner_name, created_at, updated_at)
       VALUES (?, 7, 'octo/app', 'octo', '["self-hosted"]', ?, ?, ?, ?, 1, 2)`,
    );
    await env.DB.batch([
      job.bind(101, "in_progress", repo.id, hooked.id, "runner-a"),
      job.bind(102, "queued", repo.id, null, null),
      // Runner request ids: one told by its delivery (its scale set since deleted), one by its scale set.
      job.bind(103, "completed", repo.id, null, null),
      job.bind(104, "queued", repo.id, pulled.id, null),
      env.DB.prepare(
        `INSERT INTO webhook_deliveries (delivery_id, event, action, received_at, outcome, job_id)
         VALUES ('scaleset:9:103:JobCompleted', 'scaleset_message', 'completed', 1, 'unmatched', 103)`,
      ),
    ]);
    const running = await insertInstance(hooked.id, { name: "runner-a", job_id: 101 });
    const idle = await insertInstance(hooked.id, { name: "runner-b" });

    const migration = env.TEST_MIGRATIONS.find((m) => m.name.startsWith("0018_"))!;
    await env.DB.batch(migration.queries.map((q) => env.DB.prepare(q)));

    const rows = await env.DB.prepare("SELECT seq, source, id, status, entity_id, scale_set_id, created_at FROM jobs ORDER BY id").all();
    expect(rows.results).toEqual([
      {
        seq: expect.any(Number),
        source: "webhook",
        id: 101,
        status: "in_progress",
        entity_id: repo.id,
        scale_set_id: hooked.id,
        created_at: 1,
      },
      { seq: expect.any(Number), source: "webhook", id: 102, status: "queued", entity_id: repo.id, scale_set_id: null, created_at: 1 },
      {
        seq: expect.any(Number),
        source: "scaleset_api",
        id: 103,
        status: "completed",
        entity_id: repo.id,
        scale_set_id: null,
        created_at: 1,
      },
      {
        seq: expect.any(Number),
        source: "scaleset_api",
        id: 104,
        status: "queued",
        entity_id: repo.id,
        scale_set_id: pulled.id,
        created_at: 1,
      },
    ]);
    const linked = await env.DB.prepare("SELECT id, job_id, job_seq FROM instances WHERE id IN (?, ?) ORDER BY name")
      .bind(running.id, idle.id)
      .all();
    expect(linked.results).toEqual([
      { id: running.id, job_id: 101, job_seq: (rows.results[0] as { seq: number }).seq },
      { id: idle.id, job_id: null, job_seq: null },
    ]);
    // The new key holds: the same id under another entity is another row.
    const other = await seed.repository();
    await env.DB.prepare(
      `INSERT INTO jobs (id, run_id, repository, owner, labels, status, entity_id, created_at, updated_at)
       VALUES (101, 7, 'evil/app', 'evil', '[]', 'completed', ?, 3, 3)`,
    )
      .bind(other.id)
      .run();
    expect((await env.DB.prepare("SELECT count(*) AS n FROM jobs WHERE id = 101").first<{ n: number }>())!.n).toBe(2);
  });
});
