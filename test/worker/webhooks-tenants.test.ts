import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { recordWorkflowJob } from "../../src/db/jobs/delivery-store";
import { jobEventFrom } from "../../src/intake/job-event";
import { WorkflowJobPayload } from "../../src/intake/payload";
import pkcs1 from "../fixtures/app-key-pkcs1.pem?raw";
import { clone, exampleFor, workflowJobExamples } from "../fixtures/webhook-examples";
import { api, unique } from "./helpers";
import { reconcile, type ScaleSetWorld, scaleSetWorld } from "./scaleset-world";
import { deliver, jobRow, type SendOptions } from "./webhook-setup";

// Tenants stay apart at every write (docs/security.md): a delivery signed by one entity creates
// and advances only that entity's rows of a job, and links only runners its signer may reach. The
// attacker here holds one tenant's webhook secret and signs whatever it likes with it.

const SHIM_SECRET = "tenants-shim-secret-0123456789";
const VICTIM_SECRET = "whsec-12345678"; // scaleSetWorld's repository octo/app
const ATTACKER_SECRET = "whsec-attacker-evil-app";
const ENTERPRISE_SECRET = "whsec-enterprise-evil-corp";
const HOST: SendOptions = { headers: { "x-github-enterprise-host": "github.example.test" } };

let w: ScaleSetWorld;
let attackerId: string;
let enterpriseId: string;
let jobIds = 6_100_000;

/** A real workflow_job example moved to `owner/name`, with the given job id and labels. */
function payload(action: string, owner: string, name: string, jobId: number, over: { runner?: string; enterprise?: string } = {}) {
  const p = clone(exampleFor(action, action === "in_progress" ? 2832853555 : 289782451).payload);
  p.repository.owner.login = owner;
  p.repository.name = name;
  p.repository.full_name = `${owner}/${name}`;
  p.workflow_job.id = jobId;
  p.workflow_job.labels = ["self-hosted", "linux"];
  if (action !== "queued") p.workflow_job.runner_name = over.runner ?? "GitHub Actions 2";
  if (over.enterprise) p.enterprise = { slug: over.enterprise };
  return p;
}

const victim = (action: string, jobId: number, over = {}) => deliver(payload(action, "octo", "app", jobId, over), VICTIM_SECRET, HOST);
const attacker = (action: string, jobId: number, over = {}) => deliver(payload(action, "evil", "app", jobId, over), ATTACKER_SECRET, HOST);

const instances = async () =>
  (
    await env.DB.prepare("SELECT name, status, job_id, job_seq FROM instances WHERE scale_set_id = ? AND status != 'deleted' ORDER BY name")
      .bind(w.scaleSetId)
      .all<{ name: string; status: string; job_id: number | null; job_seq: number | null }>()
  ).results;

beforeAll(async () => {
  w = await scaleSetWorld(SHIM_SECRET);
  const repo = (await api.get(`/api/v1/repositories/${w.repoId}`)).body;
  const credentials = (await api.get(`/api/v1/github/credentials/${repo.credentials_id}`)).body;
  // Another tenant on the same GitHub: its own repository, its own secret, a scale set of its own
  // that serves the same labels.
  const evil = await api.post("/api/v1/repositories", {
    owner: "evil",
    name: "app",
    credentials_name: credentials.name,
    webhook_secret: ATTACKER_SECRET,
  });
  expect(evil.status, evil.text).toBe(201);
  attackerId = evil.body.id;
  // And an enterprise, whose hook's payloads name any repository they like.
  const ent = await api.post("/api/v1/enterprises", {
    name: "evil-corp",
    credentials_name: credentials.name,
    webhook_secret: ENTERPRISE_SECRET,
  });
  expect(ent.status, ent.text).toBe(201);
  enterpriseId = ent.body.id;
});

describe("another entity's signed delivery", () => {
  it("cannot complete a victim's queued job: the victim's row stays queued and its runner still comes", async () => {
    const jobId = ++jobIds;
    expect((await victim("queued", jobId)).body).toMatchObject({ scale_set_id: w.scaleSetId, status: "queued" });
    const forged = await attacker("completed", jobId);
    expect(forged.status).toBe(200);
    expect(forged.body).toMatchObject({ job_id: jobId, status: "completed", matched: false });
    expect(await jobRow(jobId, w.repoId)).toMatchObject({ status: "queued", scale_set_id: w.scaleSetId, conclusion: null });
    expect(await jobRow(jobId, attackerId)).toMatchObject({ status: "completed", scale_set_id: null });
    await reconcile(w.scaleSetId);
    expect((await w.shim.machines()).length).toBeGreaterThanOrEqual(1);
  });

  it("cannot claim a job id before the victim's real `queued` arrives", async () => {
    const jobId = ++jobIds;
    expect((await attacker("completed", jobId)).status).toBe(200);
    expect((await victim("queued", jobId)).body).toMatchObject({ scale_set_id: w.scaleSetId, status: "queued", matched: true });
    expect(await jobRow(jobId, w.repoId)).toMatchObject({ status: "queued", entity_id: w.repoId });
  });

  it("cannot send a victim's idle runner to deletion by naming it in a job of its own", async () => {
    await api.put(`/api/v1/scalesets/${w.scaleSetId}`, { min_idle_runners: 1 });
    await reconcile(w.scaleSetId);
    const idle = (await instances()).find((i) => i.job_id === null);
    expect(idle).toBeDefined();
    const made = ++jobIds;
    expect((await attacker("completed", made, { runner: idle!.name })).status).toBe(200);
    expect((await attacker("in_progress", ++jobIds, { runner: idle!.name })).status).toBe(200);
    await reconcile(w.scaleSetId);
    const after = (await instances()).find((i) => i.name === idle!.name);
    expect(after).toMatchObject({ job_id: null, job_seq: null });
    expect(["pending_delete", "deleting", "deleted"]).not.toContain(after!.status);
    await api.put(`/api/v1/scalesets/${w.scaleSetId}`, { min_idle_runners: 0 });
  });

  it("from an enterprise's hook naming the victim's repository, writes only the enterprise's own row", async () => {
    const jobId = ++jobIds;
    await victim("queued", jobId);
    const forged = await deliver(payload("completed", "octo", "app", jobId, { enterprise: "evil-corp" }), ENTERPRISE_SECRET, HOST);
    expect(forged.status).toBe(200);
    expect(await jobRow(jobId, w.repoId)).toMatchObject({ status: "queued", scale_set_id: w.scaleSetId });
    expect(await jobRow(jobId, enterpriseId)).toMatchObject({ status: "completed" });
  });

  it("still lets the victim's own deliveries carry its job through, and link its runner", async () => {
    const jobId = ++jobIds;
    await victim("queued", jobId);
    await reconcile(w.scaleSetId);
    const free = (await instances()).find((i) => i.job_id === null)!;
    expect((await victim("in_progress", jobId, { runner: free.name })).body).toMatchObject({ status: "in_progress" });
    const row = await jobRow(jobId, w.repoId);
    expect((await instances()).find((i) => i.name === free.name)).toMatchObject({ job_id: jobId, job_seq: row!.seq });
  });
});

describe("an App's webhook, another installation", () => {
  const APP_ID = 515151;
  const APP_SECRET = "app-webhook-secret-tenants";
  const VICTIM_INSTALLATION = 3456996; // the installation of GitHub's App-level examples
  const ATTACKER_INSTALLATION = 4242424;
  let victimRepo: string;
  let victimSet: string;
  let attackerRepo: string;

  const appExample = () => {
    const e = workflowJobExamples.find((x) => x.payload.action === "queued" && x.payload.installation?.id === VICTIM_INSTALLATION);
    if (!e) throw new Error("no App-level example");
    return clone(e.payload);
  };
  const appDelivery = (action: string, installation: number, owner: string, name: string, jobId: number, runner?: string) => {
    const p = appExample();
    p.action = action;
    p.workflow_job.status = action;
    p.workflow_job.id = jobId;
    p.workflow_job.labels = ["self-hosted", "tenants-app"];
    p.installation.id = installation;
    p.repository.owner.login = owner;
    p.repository.name = name;
    p.repository.full_name = `${owner}/${name}`;
    if (runner) {
      p.workflow_job.runner_name = runner;
      p.workflow_job.started_at = p.workflow_job.created_at;
    }
    return deliver(p, APP_SECRET);
  };
  const credentials = async (installation: number) => {
    const res = await api.post("/api/v1/github/credentials", {
      name: unique("tenant-app"),
      auth_type: "app",
      app: { app_id: APP_ID, installation_id: installation, private_key: pkcs1, webhook_secret: APP_SECRET },
    });
    expect(res.status, res.text).toBe(201);
    return res.body.name as string;
  };

  beforeAll(async () => {
    const provider = (await api.get("/api/v1/providers")).body[0].name;
    const v = await api.post("/api/v1/repositories", {
      owner: "Octocoders",
      name: "Hello-World",
      credentials_name: await credentials(VICTIM_INSTALLATION),
      webhook_secret: "whsec-victim-own-hook",
    });
    expect(v.status, v.text).toBe(201);
    victimRepo = v.body.id;
    const a = await api.post("/api/v1/repositories", {
      owner: "Mallory",
      name: "tools",
      credentials_name: await credentials(ATTACKER_INSTALLATION),
      webhook_secret: "whsec-attacker-own-hook",
    });
    expect(a.status, a.text).toBe(201);
    attackerRepo = a.body.id;
    const ss = await api.post(`/api/v1/repositories/${victimRepo}/scalesets`, {
      name: "tenants-app",
      provider_name: provider,
      labels: ["self-hosted", "tenants-app"],
      max_runners: 2,
      image: "ubuntu:24.04",
      flavor: "small",
    });
    expect(ss.status, ss.text).toBe(201);
    victimSet = ss.body.id;
  });

  it("cannot complete the victim installation's job, nor link its runner", async () => {
    const jobId = ++jobIds;
    expect((await appDelivery("queued", VICTIM_INSTALLATION, "Octocoders", "Hello-World", jobId)).body).toMatchObject({
      scale_set_id: victimSet,
    });
    const runner = `tenants-app-runner-${jobId}`;
    const now = Date.now();
    await env.DB.prepare(
      `INSERT INTO instances (id, name, scale_set_id, status, runner_status, addresses, created_at, updated_at, status_changed_at)
       VALUES (?, ?, ?, 'running', 'idle', '[]', ?, ?, ?)`,
    )
      .bind(crypto.randomUUID(), runner, victimSet, now, now, now)
      .run();
    const forged = await appDelivery("completed", ATTACKER_INSTALLATION, "Mallory", "tools", jobId, runner);
    expect(forged.status).toBe(200);
    expect(await jobRow(jobId, victimRepo)).toMatchObject({ status: "queued", scale_set_id: victimSet });
    expect(await jobRow(jobId, attackerRepo)).toMatchObject({ status: "completed" });
    const instance = await env.DB.prepare("SELECT job_id, job_seq FROM instances WHERE name = ?").bind(runner).first();
    expect(instance).toEqual({ job_id: null, job_seq: null });
  });
});

describe("a runner scale set's queue", () => {
  it("keeps its runner request ids apart from REST job ids of the same entity", async () => {
    const jobId = ++jobIds;
    await victim("queued", jobId);
    const event = jobEventFrom(WorkflowJobPayload.parse(payload("completed", "octo", "app", jobId)))!;
    const result = await recordWorkflowJob(env.DB, {
      deliveryId: `scaleset:1:${jobId}:JobCompleted`,
      event: "scaleset_message",
      action: "completed",
      job: { ...event, source: "scaleset_api", entityId: w.repoId, scaleSetId: null },
      reach: [],
      receivedAt: Date.now(),
    });
    expect(result).toMatchObject({ kind: "recorded", status: "completed" });
    const rows = await env.DB.prepare("SELECT source, status FROM jobs WHERE id = ? ORDER BY seq").bind(jobId).all();
    expect(rows.results).toEqual([
      { source: "webhook", status: "queued" },
      { source: "scaleset_api", status: "completed" },
    ]);
  });
});
