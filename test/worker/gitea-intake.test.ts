import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { giteaWorkflowJobPayload } from "../fixtures/gitea/workflow-job-payload";
import { giteaDeliver, giteaEndpoint, giteaSign } from "./gitea-setup";
import { api, dumpDb } from "./helpers";
import { deliver, expectRejected, jobRow, World } from "./webhook-setup";

// POST /webhooks/gitea: Gitea's headers and signature, then the same pipeline as GitHub's
// deliveries (dedupe, merge order, tenants, label routing), and only among Gitea endpoints.

const HOST = "127.0.0.1:3401";
const OTHER_HOST = "localhost:3402";
const SECRET = "gitea-hook-secret-octo";
const ATTACKER_SECRET = "gitea-hook-secret-evil";
const INSTANCE_SECRET = "gitea-system-hook-secret";

const w = new World("gitea-intake");
let repoId: string;
let scaleSetId: string;
let instanceId: string;
let instanceScaleSetId: string;
let githubRepoId: string;
let jobIds = 7_100_000;

const job = (
  action: "queued" | "in_progress" | "completed",
  jobId: number,
  over: Partial<Parameters<typeof giteaWorkflowJobPayload>[0]> = {},
) => giteaWorkflowJobPayload({ action, host: HOST, owner: "octo", repo: "app", jobId, labels: ["ubuntu-latest"], ...over });

beforeAll(async () => {
  const { credentials } = await giteaEndpoint("gitea-a", HOST);
  const repo = await api.post("/api/v1/repositories", {
    owner: "octo",
    name: "app",
    credentials_name: credentials,
    webhook_secret: SECRET,
  });
  expect(repo.status, repo.text).toBe(201);
  repoId = repo.body.id;
  scaleSetId = await w.scaleSet("repositories", repoId, "gitea-linux", ["ubuntu-latest"]);
  const evil = await api.post("/api/v1/repositories", {
    owner: "evil",
    name: "app",
    credentials_name: credentials,
    webhook_secret: ATTACKER_SECRET,
  });
  expect(evil.status, evil.text).toBe(201);
  await w.scaleSet("repositories", evil.body.id, "evil-linux", ["ubuntu-latest"]);
  // The whole instance: kind enterprise on a Gitea endpoint, its hook a system hook.
  const inst = await api.post("/api/v1/enterprises", {
    name: "gitea-a-instance",
    credentials_name: credentials,
    webhook_secret: INSTANCE_SECRET,
  });
  expect(inst.status, inst.text).toBe(201);
  instanceId = inst.body.id;
  instanceScaleSetId = await w.scaleSet("enterprises", instanceId, "instance-arm", ["arm64"]);
  // A GitHub repository with the same name and secret: a delivery must never cross forges.
  githubRepoId = await w.repository("octo", "app", SECRET);
  await w.scaleSet("repositories", githubRepoId, "github-linux", ["ubuntu-latest"]);
});

describe("POST /webhooks/gitea", () => {
  it("accepts a delivery signed with the repository's secret and routes the job by its labels", async () => {
    const id = ++jobIds;
    const res = await giteaDeliver(job("queued", id), SECRET);
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ job_id: id, status: "queued", scale_set_id: scaleSetId, matched: true });
    const row = await jobRow(id, repoId);
    expect(row).toMatchObject({ status: "queued", scale_set_id: scaleSetId, repository: "octo/app", started_at: null });
  });

  it("turns away a wrong signature, a missing one and one not in Gitea's form, writing nothing", async () => {
    const id = ++jobIds;
    await expectRejected(401, "bad_signature", () => giteaDeliver(job("queued", id), SECRET, { signature: "0".repeat(64) }));
    const missing = await expectRejected(400, "missing_headers", () => giteaDeliver(job("queued", id), SECRET, { signature: null }));
    expect(missing.body.details.missing).toEqual(["X-Gitea-Signature"]);
    await expectRejected(400, "invalid_headers", async () =>
      giteaDeliver(job("queued", id), SECRET, { signature: `sha256=${await giteaSign(SECRET, JSON.stringify(job("queued", id)))}` }),
    );
    expect(await jobRow(id)).toBeNull();
  });

  it("keeps forges apart: a Gitea-signed delivery on GitHub's route and a GitHub one on Gitea's reach nobody", async () => {
    const id = ++jobIds;
    // Gitea also sends GitHub's header names; on GitHub's route only github.com's entities are
    // candidates, so the same secret speaks for the GitHub repository, never for the Gitea one.
    const onGithub = await giteaDeliver(job("queued", id), SECRET, { path: "/webhooks/github" });
    expect(onGithub.status, onGithub.text).toBe(200);
    expect(await jobRow(id, repoId)).toBeNull();
    expect(await jobRow(id, githubRepoId)).not.toBeNull();
    // A GitHub-style delivery about octo/app (no Gitea host in its repository URL) on Gitea's route.
    const githubish = { ...job("queued", id), repository: { ...job("queued", id).repository, html_url: "https://github.com/octo/app" } };
    await expectRejected(401, "unknown_entity", () => giteaDeliver(githubish, SECRET));
  });

  it("finds the entity only on the Gitea endpoint at the delivery's host", async () => {
    const id = ++jobIds;
    await expectRejected(401, "unknown_entity", () => giteaDeliver(job("queued", id, { host: OTHER_HOST }), SECRET));
  });

  it("answers a repeated delivery as a duplicate and advances a job whatever order its events come in", async () => {
    const id = ++jobIds;
    const delivery = `gitea-dup-${id}`;
    expect((await giteaDeliver(job("queued", id), SECRET, { delivery })).status).toBe(200);
    const again = await giteaDeliver(job("queued", id), SECRET, { delivery });
    expect(again.status, again.text).toBe(200);
    expect(again.body).toMatchObject({ duplicate: true, job_id: id });

    const late = ++jobIds;
    expect((await giteaDeliver(job("completed", late, { runnerName: "edgerunner-x", runnerId: 9 }), SECRET)).status).toBe(200);
    expect((await giteaDeliver(job("queued", late), SECRET)).status).toBe(200);
    const row = await jobRow(late, repoId);
    expect(row).toMatchObject({ status: "completed", conclusion: "success" });
    expect(row!.started_at).toBeGreaterThan(0); // a real time, not Go's zero time
  });

  it("lets one tenant's secret speak only for its own repository", async () => {
    const id = ++jobIds;
    // evil/app's secret over a payload naming octo/app: no entity named in it signed it.
    await expectRejected(401, "bad_signature", () => giteaDeliver(job("queued", id), ATTACKER_SECRET));
    const own = await giteaDeliver(job("queued", id, { owner: "evil" }), ATTACKER_SECRET);
    expect(own.status, own.text).toBe(200);
    expect(own.body.scale_set_id).not.toBe(scaleSetId);
  });

  it("takes the instance's system hook for any repository and routes to the instance's scale sets", async () => {
    const id = ++jobIds;
    const res = await giteaDeliver(job("queued", id, { owner: "someone", repo: "else", labels: ["arm64"] }), INSTANCE_SECRET, {
      target: "system",
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ matched: true, scale_set_id: instanceScaleSetId });
    expect(await jobRow(id, instanceId)).toMatchObject({ status: "queued" });
    // The instance's secret on a repository hook's delivery is no system hook: nobody it names signed it.
    await expectRejected(401, "unknown_entity", () =>
      giteaDeliver(job("queued", ++jobIds, { owner: "someone", repo: "else" }), INSTANCE_SECRET),
    );
  });

  it("ignores events other than workflow_job, and ping", async () => {
    const before = await dumpDb();
    for (const event of ["push", "ping"]) {
      const res = await giteaDeliver({ ref: "refs/heads/main", repository: job("queued", 1).repository }, SECRET, { event });
      expect(res.status, res.text).toBe(202);
    }
    expect(await dumpDb()).toEqual(before);
  });

  it("leaves GitHub's route as it was for GitHub's entities", async () => {
    const id = ++jobIds;
    const p = job("queued", id);
    const res = await deliver({ ...p, repository: { ...p.repository, html_url: "https://github.com/octo/app" } }, SECRET);
    expect(res.status, res.text).toBe(200);
    const rows = await env.DB.prepare("SELECT entity_id FROM jobs WHERE id = ?").bind(id).all<{ entity_id: string }>();
    expect(rows.results.map((r) => r.entity_id)).toEqual([githubRepoId]);
  });
});
