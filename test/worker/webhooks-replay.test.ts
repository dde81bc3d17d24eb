import { createExecutionContext, createScheduledController, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { sign } from "@octokit/webhooks-methods";
import { beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../../src/app";
import worker from "../../src/index";
import { clone, exampleFor } from "../fixtures/webhook-examples";
import { dumpDb } from "./helpers";
import { jobRow, newDeliveryId, pendingRejections, World } from "./webhook-setup";

// A captured delivery can be replayed under a fresh X-GitHub-Delivery (the signature covers the
// body only). Once its job's row is pruned, such a replay must not bring the job back.

const DAY = 86_400_000;
const SECRET = "repo-secret-replayed";
/** The coordinator as deployed: RETENTION_DAYS at its default (the worker tests keep ten years). */
const deployed = () => {
  const { RETENTION_DAYS: _tenYears, ...rest } = env;
  return rest;
};

let scaleSetId: string;
let jobIds = 7_300_000;

/** GitHub's example lifecycle moved to octo-org/replayed, for a job GitHub created `daysAgo` days ago. */
function payload(action: string, jobId: number, daysAgo: number) {
  const p = clone(exampleFor(action, action === "in_progress" ? 2832853555 : 289782451).payload);
  p.repository.owner.login = "octo-org";
  p.repository.name = "replayed";
  p.repository.full_name = "octo-org/replayed";
  p.workflow_job.id = jobId;
  p.workflow_job.labels = ["self-hosted", "replayed"];
  const created = Date.now() - daysAgo * DAY;
  const shift = created - Date.parse(p.workflow_job.created_at);
  for (const key of ["created_at", "started_at", "completed_at"] as const) {
    const t = Date.parse(p.workflow_job[key] ?? "");
    if (Number.isFinite(t)) p.workflow_job[key] = new Date(t + shift).toISOString();
  }
  return p;
}

/** Sends a signed delivery (a fresh delivery id unless given) to the coordinator as deployed. */
async function send(body: string, delivery = newDeliveryId()) {
  const ctx = createExecutionContext();
  const res = await createApp().fetch(
    new Request("https://edgerunner.test/webhooks/github", {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "x-github-event": "workflow_job",
        "x-github-delivery": delivery,
        "x-hub-signature-256": await sign(SECRET, body),
      },
      body,
    }),
    deployed(),
    ctx,
  );
  await waitOnExecutionContext(ctx);
  return { status: res.status, body: (await res.json()) as Record<string, any> };
}

beforeAll(async () => {
  const w = new World("replay");
  const repo = await w.repository("octo-org", "replayed", SECRET);
  scaleSetId = await w.scaleSet("repositories", repo, "replayed", ["self-hosted", "replayed"]);
});

describe("a delivery about a job older than RETENTION_DAYS", () => {
  it("cannot bring back a job retention pruned: 422, nothing written", async () => {
    const jobId = ++jobIds;
    // The job's life, 40 days ago (as it arrived then), and its `queued` delivery captured.
    const captured = JSON.stringify(payload("queued", jobId, 40));
    await env.DB.batch([
      env.DB.prepare(
        `INSERT INTO jobs (id, run_id, repository, owner, labels, status, entity_id, scale_set_id, queued_at, created_at, updated_at)
         SELECT ?1, 1, 'octo-org/replayed', 'octo-org', '["self-hosted","replayed"]', 'completed', entity_id, id, ?2, ?2, ?2
         FROM scale_sets WHERE id = ?3`,
      ).bind(jobId, Date.now() - 40 * DAY, scaleSetId),
      // A later job: retention always keeps the newest row.
      env.DB.prepare(
        `INSERT INTO jobs (id, run_id, repository, owner, labels, status, entity_id, scale_set_id, queued_at, created_at, updated_at)
         SELECT ?1, 1, 'octo-org/replayed', 'octo-org', '["self-hosted","replayed"]', 'queued', entity_id, id, ?2, ?2, ?2
         FROM scale_sets WHERE id = ?3`,
      ).bind(jobId + 500_000, Date.now(), scaleSetId),
    ]);
    await worker.scheduled(createScheduledController({ scheduledTime: Date.now(), cron: "17 * * * *" }), deployed());
    expect(await jobRow(jobId)).toBeNull();

    const before = await dumpDb();
    const pending = pendingRejections("job_too_old");
    const replayed = await send(captured);
    expect(replayed.status).toBe(422);
    expect(replayed.body).toMatchObject({ code: "unprocessable", details: { job_id: jobId } });
    expect(replayed.body.details.reason).toContain("RETENTION_DAYS");
    expect(await dumpDb()).toEqual(before);
    expect(pendingRejections("job_too_old")).toBe(pending + 1);
  });

  it("still advances a row that exists (a long job's late `completed`)", async () => {
    const jobId = ++jobIds;
    await env.DB.prepare(
      `INSERT INTO jobs (id, run_id, repository, owner, labels, status, entity_id, scale_set_id, queued_at, created_at, updated_at)
       SELECT ?1, 1, 'octo-org/replayed', 'octo-org', '["self-hosted","replayed"]', 'in_progress', entity_id, id, ?2, ?2, ?3
       FROM scale_sets WHERE id = ?4`,
    )
      .bind(jobId, Date.now() - 40 * DAY, Date.now() - DAY, scaleSetId)
      .run();
    const done = await send(JSON.stringify(payload("completed", jobId, 40)));
    expect(done.status).toBe(200);
    expect(done.body).toMatchObject({ status: "completed", scale_set_id: scaleSetId });
    expect(await jobRow(jobId)).toMatchObject({ status: "completed" });
  });

  it("answers a redelivery of a delivery already handled as a duplicate, not as too old", async () => {
    const jobId = ++jobIds;
    const id = newDeliveryId();
    const body = JSON.stringify(payload("queued", jobId, 20));
    expect((await send(body, id)).status).toBe(200);
    await env.DB.prepare("UPDATE jobs SET queued_at = ? WHERE id = ?")
      .bind(Date.now() - 40 * DAY, jobId)
      .run();
    const again = await send(JSON.stringify(payload("queued", jobId, 40)), id);
    expect(again).toMatchObject({ status: 200, body: { duplicate: true } });
  });

  it("is taken as usual for a job within the window", async () => {
    const jobId = ++jobIds;
    expect(await send(JSON.stringify(payload("queued", jobId, 29)))).toMatchObject({
      status: 200,
      body: { status: "queued", scale_set_id: scaleSetId },
    });
  });
});
