import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { jobEventFrom } from "../../src/intake/job-event";
import { type JobState, mergeJob } from "../../src/intake/job-merge";
import { WorkflowJobPayload } from "../../src/intake/payload";
import { clone, exampleFor, workflowJobExamples } from "../fixtures/webhook-examples";
import { api, dumpDb } from "./helpers";
import { deliver, jobRow, newDeliveryId, World } from "./webhook-setup";

// What accepted workflow_job deliveries do to D1: dedupe, order-proof merge, routing, runner link.

const SECRET = {
  octoOrg: "org-secret-octo-org",
  example: "repo-secret-example-workflow",
  hello: "repo-secret-hello-world",
  lineville: "repo-secret-lineville",
  wolfy: "repo-secret-wolfy",
  priorities: "repo-secret-priorities",
  ties: "repo-secret-ties",
  oldest: "repo-secret-oldest",
  disabled: "repo-secret-disabled",
  enterprise: "enterprise-secret-octo-corp",
  parented: "repo-secret-parented",
  evalEnt: "enterprise-secret-eval-ent",
};

const ids: Record<string, string> = {};
const sets: Record<string, string> = {};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A real example moved to another repository of octo-org and given its own job id. */
function exampleIn(repo: string, action: string, exampleJobId: number, newId: number, labels?: string[]) {
  const p = clone(exampleFor(action, exampleJobId).payload);
  p.repository.owner.login = "octo-org";
  p.repository.name = repo;
  p.repository.full_name = `octo-org/${repo}`;
  p.workflow_job.id = newId;
  if (labels) p.workflow_job.labels = labels;
  return p;
}

beforeAll(async () => {
  const w = new World("jobs");
  ids.octoOrg = await w.organization("octo-org", SECRET.octoOrg);
  ids.example = await w.repository("octo-org", "example-workflow", SECRET.example);
  ids.hello = await w.repository("Octocoders", "Hello-World", SECRET.hello);
  ids.lineville = await w.repository("lineville", "elastic-machines-testing", SECRET.lineville);
  ids.wolfy = await w.repository("wolfy1339", "github-events-schemas", SECRET.wolfy);
  ids.priorities = await w.repository("octo-org", "priorities", SECRET.priorities);
  ids.ties = await w.repository("octo-org", "ties", SECRET.ties);
  ids.oldest = await w.repository("octo-org", "oldest", SECRET.oldest);
  ids.disabled = await w.repository("octo-org", "disabled", SECRET.disabled);
  ids.enterprise = await w.enterprise("octo-corp", SECRET.enterprise);
  ids.evalEnt = await w.enterprise("eval-ent", SECRET.evalEnt);
  // Registered to use its parents' scale sets: octo-org's, and octo-corp's.
  ids.parented = await w.repository("octo-org", "parented", SECRET.parented, "github.com", {
    use_parent_scale_sets: true,
    enterprise: "octo-corp",
  });

  // octo-org/example-workflow has no scale set of its own: the organization's serves it.
  sets.orgGpu = await w.scaleSet("organizations", ids.octoOrg, "gpu", ["gpu", "db-app", "dc-03", "self-hosted"]);
  // Labels stored normalized; GitHub's example asks for ["self-hosted", "k8s"].
  sets.k8s = await w.scaleSet("repositories", ids.lineville, "k8s", ["Self-Hosted", "K8S"]);

  sets.low = await w.scaleSet("repositories", ids.priorities, "low", ["self-hosted", "linux"], { priority: 1 });
  sets.high = await w.scaleSet("repositories", ids.priorities, "high", ["self-hosted", "linux", "x64"], { priority: 5 });
  sets.off = await w.scaleSet("repositories", ids.priorities, "off", ["self-hosted", "linux"], { priority: 9, enabled: false });

  sets.broad = await w.scaleSet("repositories", ids.ties, "broad", ["self-hosted", "linux", "gpu"]);
  await sleep(3);
  sets.specific = await w.scaleSet("repositories", ids.ties, "specific", ["self-hosted", "linux"]);

  sets.older = await w.scaleSet("repositories", ids.oldest, "older", ["self-hosted", "arm64"]);
  await sleep(3);
  sets.newer = await w.scaleSet("repositories", ids.oldest, "newer", ["self-hosted", "arm64"]);

  sets.onlyDisabled = await w.scaleSet("repositories", ids.disabled, "only", ["self-hosted", "linux"], { enabled: false });

  sets.enterprise = await w.scaleSet("enterprises", ids.enterprise, "fleet", ["self-hosted", "enterprise-pool"]);
  sets.evalEnt = await w.scaleSet("enterprises", ids.evalEnt, "ent-only", ["self-hosted", "ent-only"]);
});

describe("every GitHub workflow_job example", () => {
  const secretFor: Record<string, string> = {
    "octo-org/example-workflow": SECRET.example,
    "Octocoders/Hello-World": SECRET.hello,
    "lineville/elastic-machines-testing": SECRET.lineville,
    "wolfy1339/github-events-schemas": SECRET.wolfy,
  };

  it.each(workflowJobExamples.map((e) => [e.source, e.payload] as const))("is accepted and stored: %s", async (_source, payload) => {
    const p = clone(payload);
    p.workflow_job.id = 1_000_000 + workflowJobExamples.findIndex((e) => e.payload === payload);
    const repo = `${p.repository.owner.login}/${p.repository.name}`;
    const delivery = newDeliveryId();
    const res = await deliver(p, secretFor[repo]!, { delivery });
    expect(res.status, res.text).toBe(200);
    const row = (await jobRow(p.workflow_job.id))!;
    const expected = jobEventFrom(WorkflowJobPayload.parse(p))!;
    expect(row).toMatchObject({
      run_id: expected.runId,
      repository: repo,
      owner: p.repository.owner.login,
      labels: JSON.stringify(p.workflow_job.labels),
      status: expected.status,
      conclusion: expected.conclusion,
      runner_name: expected.runnerName,
      queued_at: expected.queuedAt,
      started_at: expected.startedAt,
      completed_at: expected.completedAt,
    });
    expect(res.body).toMatchObject({ delivery, job_id: p.workflow_job.id, status: expected.status, matched: row.scale_set_id !== null });
    const recorded = await env.DB.prepare("SELECT * FROM webhook_deliveries WHERE delivery_id = ?").bind(delivery).first();
    expect(recorded).toMatchObject({
      event: "workflow_job",
      action: p.action,
      job_id: p.workflow_job.id,
      outcome: row.scale_set_id ? "routed" : "unmatched",
    });
  });
});

describe("duplicates", () => {
  it("answers a delivery id seen before with 200 and a duplicate marker, changing nothing", async () => {
    const p = exampleIn("example-workflow", "in_progress", 2832853555, 2_000_001);
    const delivery = newDeliveryId();
    expect((await deliver(p, SECRET.example, { delivery })).status).toBe(200);
    const before = await dumpDb();
    for (let i = 0; i < 3; i++) {
      const again = await deliver(p, SECRET.example, { delivery });
      expect(again.status, again.text).toBe(200);
      expect(again.body).toMatchObject({ duplicate: true, delivery });
    }
    expect(await dumpDb()).toEqual(before);
  });

  it("treats a redelivery with another payload under the same id as the same delivery", async () => {
    const delivery = newDeliveryId();
    const queued = exampleIn("hello", "queued", 289782451, 2_000_002);
    const completed = exampleIn("hello", "completed", 289782451, 2_000_002);
    // Registered? octo-org/hello is not; the organization's secret signs for it.
    expect((await deliver(queued, SECRET.octoOrg, { delivery })).status).toBe(200);
    const res = await deliver(completed, SECRET.octoOrg, { delivery });
    expect(res.body.duplicate).toBe(true);
    expect((await jobRow(2_000_002))!.status).toBe("queued");
  });

  it("applies concurrent copies of one delivery exactly once", async () => {
    const p = exampleIn("example-workflow", "queued", 289782451, 2_000_003, ["gpu"]);
    const delivery = newDeliveryId();
    const results = await Promise.all(Array.from({ length: 8 }, () => deliver(p, SECRET.example, { delivery })));
    expect(results.map((r) => r.status)).toEqual(Array(8).fill(200));
    expect(results.filter((r) => r.body.duplicate !== true)).toHaveLength(1);
    const rows = await env.DB.prepare("SELECT count(*) AS n FROM webhook_deliveries WHERE delivery_id = ?")
      .bind(delivery)
      .first<{ n: number }>();
    expect(rows!.n).toBe(1);
  });
});

describe("order", () => {
  const lifecycle = ["queued", "in_progress", "completed"] as const;
  const permutations = (xs: readonly string[]): string[][] =>
    xs.length <= 1 ? [[...xs]] : xs.flatMap((x, i) => permutations([...xs.slice(0, i), ...xs.slice(i + 1)]).map((p) => [x, ...p]));
  const comparable = (row: Record<string, unknown>) => {
    const { seq: _seq, id: _id, created_at: _c, updated_at: _u, ...rest } = row;
    return rest;
  };

  it("ends every permutation of queued, in_progress and completed in the same state", async () => {
    const orders = permutations(lifecycle);
    expect(orders).toHaveLength(6);
    const finals: Record<string, unknown>[] = [];
    for (const [i, order] of orders.entries()) {
      const jobId = 3_000_000 + i;
      for (const action of order) {
        const res = await deliver(exampleIn("example-workflow", action, 289782451, jobId), SECRET.example);
        expect(res.status, res.text).toBe(200);
        expect(res.body.duplicate).toBeUndefined();
      }
      finals.push(comparable((await jobRow(jobId))!));
    }
    for (const f of finals) expect(f).toEqual(finals[0]);
    expect(finals[0]).toMatchObject({ status: "completed", conclusion: "failure", runner_name: "GitHub Actions 5", runner_id: 5 });

    // …and it is the state the pure merge rules define.
    const states = lifecycle.map(
      (a): JobState => ({
        ...jobEventFrom(WorkflowJobPayload.parse(exampleIn("example-workflow", a, 289782451, 3_000_000)))!,
        source: "webhook",
        entityId: ids.example!,
        scaleSetId: null,
      }),
    );
    const pure = states.reduce<JobState | null>((s, e) => mergeJob(s, e), null)!;
    expect(finals[0]).toMatchObject({
      status: pure.status,
      conclusion: pure.conclusion,
      runner_name: pure.runnerName,
      runner_id: pure.runnerId,
      name: pure.name,
      workflow_name: pure.workflowName,
      queued_at: pure.queuedAt,
      started_at: pure.startedAt,
      completed_at: pure.completedAt,
      entity_id: pure.entityId,
    });
  });

  it("ends concurrent deliveries of all three in the same state", async () => {
    const sequential = comparable((await jobRow(3_000_000))!);
    for (let round = 0; round < 3; round++) {
      const jobId = 3_100_000 + round;
      const results = await Promise.all(lifecycle.map((a) => deliver(exampleIn("example-workflow", a, 289782451, jobId), SECRET.example)));
      expect(results.map((r) => r.status)).toEqual([200, 200, 200]);
      expect(comparable((await jobRow(jobId))!)).toEqual(sequential);
    }
  });

  it("never moves a completed job back, and lets late events fill what it lacked", async () => {
    const jobId = 3_200_000;
    const completed = exampleIn("example-workflow", "completed", 289782451, jobId);
    delete completed.workflow_job.workflow_name;
    await deliver(completed, SECRET.example);
    expect((await jobRow(jobId))!.workflow_name).toBeNull();
    await deliver(exampleIn("example-workflow", "queued", 289782451, jobId), SECRET.example);
    expect(await jobRow(jobId)).toMatchObject({ status: "completed", conclusion: "failure", workflow_name: "CodeQL" });
  });
});

describe("routing", () => {
  it("routes a job signed by a repository's secret only to that repository's scale sets, not its organization's", async () => {
    // octo-org/example-workflow has no scale set; octo-org has one that serves the job.
    const res = await deliver(exampleIn("example-workflow", "in_progress", 2832853555, 4_000_001), SECRET.example);
    expect(res.body).toMatchObject({ scale_set_id: null, matched: false });
    expect((await jobRow(4_000_001))!.scale_set_id).toBeNull();
    // The organization's own hook reports the same job: its scale set takes it.
    const byOrg = await deliver(exampleIn("example-workflow", "in_progress", 2832853555, 4_000_001), SECRET.octoOrg);
    expect(byOrg.body).toMatchObject({ scale_set_id: sets.orgGpu, matched: true });
  });

  it("routes to the organization's scale sets when the repository was registered to use its parents'", async () => {
    const res = await deliver(exampleIn("parented", "in_progress", 2832853555, 4_000_004), SECRET.parented);
    expect(res.body).toMatchObject({ scale_set_id: sets.orgGpu, matched: true });
  });

  it("never lets a payload's enterprise choose scale sets: a repository's secret cannot reach an enterprise's fleet", async () => {
    // The reproduction: signed with lineville's secret, naming eval-ent, asking for its labels.
    const p = clone(exampleFor("queued", 12877621891).payload); // lineville/elastic-machines-testing
    p.workflow_job.id = 4_000_002;
    p.workflow_job.labels = ["self-hosted", "ent-only"];
    p.enterprise = { slug: "eval-ent" };
    const res = await deliver(p, SECRET.lineville);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ scale_set_id: null, matched: false });
    expect((await jobRow(4_000_002))!.scale_set_id).toBeNull();
    // The same with an organization named in the payload: nothing but the signer's own sets.
    const q = exampleIn("example-workflow", "queued", 289782451, 4_000_003, ["self-hosted", "enterprise-pool"]);
    q.enterprise = { slug: "octo-corp" };
    q.organization = { login: "octo-org" };
    expect((await deliver(q, SECRET.example)).body).toMatchObject({ scale_set_id: null, matched: false });
  });

  it("routes to an enterprise's scale set what the enterprise's own hook signed, or a repository registered under it", async () => {
    const p = exampleIn("example-workflow", "queued", 289782451, 4_000_005, ["self-hosted", "enterprise-pool"]);
    p.enterprise = { slug: "octo-corp" };
    expect((await deliver(p, SECRET.enterprise)).body).toMatchObject({ scale_set_id: sets.enterprise, matched: true });
    // parented is registered under octo-corp: its jobs may use the fleet, whether or not the payload names it.
    const q = exampleIn("parented", "queued", 289782451, 4_000_006, ["self-hosted", "enterprise-pool"]);
    expect((await deliver(q, SECRET.parented)).body).toMatchObject({ scale_set_id: sets.enterprise, matched: true });
    // ... but not another enterprise's fleet that the payload names.
    const r = exampleIn("parented", "queued", 289782451, 4_000_007, ["self-hosted", "ent-only"]);
    r.enterprise = { slug: "eval-ent" };
    expect((await deliver(r, SECRET.parented)).body).toMatchObject({ scale_set_id: null, matched: false });
  });

  it("does not feed a separately registered repository's scale sets from the organization's hook", async () => {
    // octo-org/priorities has [self-hosted, linux] scale sets; octo-org itself has none.
    const p = exampleIn("priorities", "queued", 289782451, 4_000_008, ["self-hosted", "linux"]);
    expect((await deliver(p, SECRET.octoOrg)).body).toMatchObject({ scale_set_id: null, matched: false });
    const q = exampleIn("priorities", "queued", 289782451, 4_000_009, ["self-hosted", "linux"]);
    expect((await deliver(q, SECRET.priorities)).body).toMatchObject({ scale_set_id: sets.high, matched: true });
  });

  it("matches labels case-insensitively", async () => {
    const real = clone(exampleFor("queued", 12877621891).payload); // ["self-hosted", "k8s"]
    real.workflow_job.id = 4_000_010;
    expect((await deliver(real, SECRET.lineville)).body.scale_set_id).toBe(sets.k8s);
    const shouting = clone(real);
    shouting.workflow_job.id = 4_000_011;
    shouting.workflow_job.labels = ["SELF-HOSTED", "K8s"];
    expect((await deliver(shouting, SECRET.lineville)).body.scale_set_id).toBe(sets.k8s);
  });

  it("stores a job no scale set serves as unmatched, listed by GET /api/v1/jobs?unmatched=true", async () => {
    const p = clone(exampleFor("queued", 12877621891).payload);
    p.workflow_job.id = 4_000_020;
    p.workflow_job.labels = ["self-hosted", "k8s", "gpu"]; // one label too many for the k8s set
    const res = await deliver(p, SECRET.lineville);
    expect(res.body).toMatchObject({ matched: false, scale_set_id: null });
    const listed = await api.get("/api/v1/jobs?unmatched=true&limit=500");
    expect(listed.status).toBe(200);
    const job = listed.body.jobs.find((j: { id: number }) => j.id === 4_000_020);
    expect(job).toMatchObject({ matched: false, scale_set_id: null, labels: ["self-hosted", "k8s", "gpu"], status: "waiting" });
    const matched = await api.get("/api/v1/jobs?unmatched=true&limit=500");
    expect(matched.body.jobs.some((j: { id: number }) => j.id === 4_000_010)).toBe(false);
  });

  it("never routes to a disabled scale set, however high its priority", async () => {
    const res = await deliver(exampleIn("priorities", "queued", 289782451, 4_000_030, ["self-hosted", "linux"]), SECRET.priorities);
    expect(res.body.scale_set_id).not.toBe(sets.off);
    const only = await deliver(exampleIn("disabled", "queued", 289782451, 4_000_031, ["self-hosted", "linux"]), SECRET.disabled);
    expect(only.body).toMatchObject({ scale_set_id: null, matched: false });
  });

  it("picks the highest priority among matching scale sets", async () => {
    const res = await deliver(exampleIn("priorities", "queued", 289782451, 4_000_040, ["Linux", "self-hosted"]), SECRET.priorities);
    expect(res.body.scale_set_id).toBe(sets.high);
    // Only the high-priority set has x64.
    const x64 = await deliver(exampleIn("priorities", "queued", 289782451, 4_000_041, ["x64"]), SECRET.priorities);
    expect(x64.body.scale_set_id).toBe(sets.high);
  });

  it("breaks priority ties by fewest extra labels, then by age", async () => {
    const res = await deliver(exampleIn("ties", "queued", 289782451, 4_000_050, ["self-hosted", "linux"]), SECRET.ties);
    expect(res.body.scale_set_id).toBe(sets.specific);
    const gpu = await deliver(exampleIn("ties", "queued", 289782451, 4_000_051, ["gpu"]), SECRET.ties);
    expect(gpu.body.scale_set_id).toBe(sets.broad);
    const arm = await deliver(exampleIn("oldest", "queued", 289782451, 4_000_052, ["self-hosted", "arm64"]), SECRET.oldest);
    expect(arm.body.scale_set_id).toBe(sets.older);
  });

  it("keeps a job on the scale set it was first routed to", async () => {
    const jobId = 4_000_060;
    // parented may use octo-org's scale sets: its job goes to the organization's gpu set.
    await deliver(exampleIn("parented", "queued", 289782451, jobId, ["gpu"]), SECRET.parented);
    await deliver(exampleIn("parented", "completed", 289782451, jobId, ["gpu"]), SECRET.parented);
    expect(await jobRow(jobId)).toMatchObject({ scale_set_id: sets.orgGpu, status: "completed", entity_id: ids.parented });
  });

  it("keeps each signer's row of a job apart: the organization's hook reporting a repository's job has its own", async () => {
    const jobId = 4_000_061;
    await deliver(exampleIn("example-workflow", "queued", 289782451, jobId, ["gpu"]), SECRET.example);
    // The organization's own hook reports the same job: its row, routed in its own scope.
    const byOrg = await deliver(exampleIn("example-workflow", "completed", 289782451, jobId, ["gpu"]), SECRET.octoOrg);
    expect(byOrg.body).toMatchObject({ scale_set_id: sets.orgGpu, status: "completed" });
    expect(await jobRow(jobId, ids.example)).toMatchObject({ scale_set_id: null, status: "queued", entity_id: ids.example });
    expect(await jobRow(jobId, ids.octoOrg)).toMatchObject({ scale_set_id: sets.orgGpu, status: "completed", entity_id: ids.octoOrg });
  });
});

describe("jobs waiting for a scale set", () => {
  it("routes jobs already waiting unmatched when a scale set that serves them is created, or enabled", async () => {
    const w = new World("late");
    const repo = await w.repository("octo-org", "late", "repo-secret-late");
    await deliver(exampleIn("late", "queued", 289782451, 4_000_070, ["self-hosted", "late-gpu"]), "repo-secret-late");
    await deliver(exampleIn("late", "queued", 289782451, 4_000_071, ["self-hosted", "late-arm"]), "repo-secret-late");
    // A finished job waits for nothing.
    await deliver(exampleIn("late", "completed", 289782451, 4_000_072, ["self-hosted", "late-gpu"]), "repo-secret-late");
    expect((await jobRow(4_000_070))!.scale_set_id).toBeNull();

    const gpu = await w.scaleSet("repositories", repo, "late-gpu", ["self-hosted", "late-gpu"]);
    expect((await jobRow(4_000_070))!.scale_set_id).toBe(gpu);
    expect((await jobRow(4_000_071))!.scale_set_id).toBeNull();
    expect((await jobRow(4_000_072))!.scale_set_id).toBeNull();

    // A disabled scale set takes nothing until it is enabled.
    const arm = await w.scaleSet("repositories", repo, "late-arm", ["self-hosted", "late-arm"], { enabled: false });
    expect((await jobRow(4_000_071))!.scale_set_id).toBeNull();
    expect((await api.put(`/api/v1/scalesets/${arm}`, { enabled: true })).status).toBe(200);
    expect((await jobRow(4_000_071))!.scale_set_id).toBe(arm);
    // Jobs of other repositories stay where they were.
    expect((await jobRow(4_000_020))!.scale_set_id).toBeNull();
  });

  it("gives an organization's new scale set the waiting jobs of its repositories", async () => {
    const w = new World("lateorg");
    const org = await w.organization("late-org", "org-secret-late-org");
    const p = exampleIn("anything", "queued", 289782451, 4_000_075, ["self-hosted", "late-org-pool"]);
    p.repository.owner.login = "late-org";
    p.repository.full_name = "late-org/anything";
    p.organization = { ...(p.organization ?? {}), login: "late-org" };
    expect((await deliver(p, "org-secret-late-org")).body).toMatchObject({ matched: false });
    const pool = await w.scaleSet("organizations", org, "pool", ["self-hosted", "late-org-pool"]);
    expect((await jobRow(4_000_075))!.scale_set_id).toBe(pool);
  });

  it("reroutes a waiting job only into its signer's scope: not to a parent it did not opt into, nor an enterprise its payload named", async () => {
    const w = new World("scoped");
    const ent = await w.enterprise("scoped-ent", "ent-secret-scoped");
    const org = await w.organization("scoped-org", "org-secret-scoped");
    await w.repository("scoped-org", "plain", "repo-secret-scoped-plain");
    await w.repository("scoped-org", "linked", "repo-secret-scoped-linked", "github.com", {
      use_parent_scale_sets: true,
      enterprise: "scoped-ent",
    });
    const job = (repo: string, id: number, labels: string[]) => {
      const p = exampleIn(repo, "queued", 289782451, id, labels);
      p.repository.owner.login = "scoped-org";
      p.repository.full_name = `scoped-org/${repo}`;
      p.enterprise = { slug: "scoped-ent" };
      return p;
    };
    await deliver(job("plain", 4_000_090, ["self-hosted", "scoped-org-pool"]), "repo-secret-scoped-plain");
    await deliver(job("linked", 4_000_091, ["self-hosted", "scoped-org-pool"]), "repo-secret-scoped-linked");
    await deliver(job("plain", 4_000_092, ["self-hosted", "scoped-ent-pool"]), "repo-secret-scoped-plain");
    await deliver(job("linked", 4_000_093, ["self-hosted", "scoped-ent-pool"]), "repo-secret-scoped-linked");
    for (const id of [4_000_090, 4_000_091, 4_000_092, 4_000_093]) expect((await jobRow(id))!.scale_set_id).toBeNull();

    const orgPool = await w.scaleSet("organizations", org, "pool", ["self-hosted", "scoped-org-pool"]);
    expect((await jobRow(4_000_090))!.scale_set_id).toBeNull();
    expect((await jobRow(4_000_091))!.scale_set_id).toBe(orgPool);

    const entPool = await w.scaleSet("enterprises", ent, "pool", ["self-hosted", "scoped-ent-pool"]);
    expect((await jobRow(4_000_092))!.scale_set_id).toBeNull();
    expect((await jobRow(4_000_093))!.scale_set_id).toBe(entPool);
  });

  it("routes a repository's waiting jobs to its parents' scale sets once it is registered to use them", async () => {
    const w = new World("optin");
    const org = await w.organization("optin-org", "org-secret-optin");
    const repo = await w.repository("optin-org", "app", "repo-secret-optin");
    const pool = await w.scaleSet("organizations", org, "pool", ["self-hosted", "optin-pool"]);
    const p = exampleIn("app", "queued", 289782451, 4_000_095, ["self-hosted", "optin-pool"]);
    p.repository.owner.login = "optin-org";
    p.repository.full_name = "optin-org/app";
    expect((await deliver(p, "repo-secret-optin")).body).toMatchObject({ matched: false });
    expect((await api.put(`/api/v1/repositories/${repo}`, { use_parent_scale_sets: true })).status).toBe(200);
    expect((await jobRow(4_000_095))!.scale_set_id).toBe(pool);
  });

  it("routes a job a stale cached directory stored unmatched once that cache has expired", async () => {
    const w = new World("fresh");
    const repo = await w.repository("octo-org", "fresh", "repo-secret-fresh");
    await w.scaleSet("repositories", repo, "plain", ["self-hosted", "linux"]);
    // This delivery caches the repository's directory in the isolate…
    expect(
      (await deliver(exampleIn("fresh", "queued", 289782451, 4_000_080, ["self-hosted", "linux"]), "repo-secret-fresh")).body.matched,
    ).toBe(true);
    // …and a scale set created just after is in no cached copy: the delivery stores the job unmatched.
    const gpu = await w.scaleSet("repositories", repo, "gpu", ["self-hosted", "fresh-gpu"]);
    await deliver(exampleIn("fresh", "queued", 289782451, 4_000_081, ["self-hosted", "fresh-gpu"]), "repo-secret-fresh");
    // The scale set's creation routes waiting jobs once more after the cache's lifetime.
    let row = await jobRow(4_000_081);
    for (let i = 0; i < 100 && row!.scale_set_id !== gpu; i++) {
      await sleep(100);
      row = await jobRow(4_000_081);
    }
    expect(row!.scale_set_id).toBe(gpu);
  }, 20_000);
});

describe("runner link", () => {
  const now = Date.now();
  async function instance(name: string, scaleSetId: string, jobId: number | null = null): Promise<string> {
    const id = crypto.randomUUID();
    await env.DB.prepare(
      `INSERT INTO instances (id, name, scale_set_id, status, runner_status, addresses, job_id, created_at, updated_at, status_changed_at)
       VALUES (?, ?, ?, 'running', 'idle', '[]', ?, ?, ?, ?)`,
    )
      .bind(id, name, scaleSetId, jobId, now, now, now)
      .run();
    return id;
  }
  const instanceRow = (id: string) => env.DB.prepare("SELECT * FROM instances WHERE id = ?").bind(id).first<Record<string, any>>();

  it("links our instance to the job it runs, and keeps the link when the job completes", async () => {
    const runner = "edgerunner-gpu-0001";
    const instanceId = await instance(runner, sets.orgGpu!);
    const jobId = 5_000_001;
    // parented may use octo-org's scale sets, so its deliveries reach the gpu set's runners.
    const queued = exampleIn("parented", "queued", 289782451, jobId, ["gpu"]);
    await deliver(queued, SECRET.parented);
    expect((await instanceRow(instanceId))!.job_id).toBeNull();

    const running = exampleIn("parented", "in_progress", 2832853555, jobId, ["gpu"]);
    running.workflow_job.runner_name = runner;
    expect((await deliver(running, SECRET.parented)).status).toBe(200);
    const linked = (await instanceRow(instanceId))!;
    expect(linked.job_id).toBe(jobId);
    expect(linked.job_seq).toBe((await jobRow(jobId))!.seq);
    expect(linked.updated_at).toBeGreaterThanOrEqual(now);

    const completed = exampleIn("parented", "completed", 289782451, jobId, ["gpu"]);
    completed.workflow_job.runner_name = runner;
    await deliver(completed, SECRET.parented);
    expect((await instanceRow(instanceId))!).toEqual(linked);
    expect(await jobRow(jobId)).toMatchObject({ status: "completed", runner_name: runner });
  });

  it("links on completion when in_progress never arrived", async () => {
    const runner = "edgerunner-gpu-0002";
    const instanceId = await instance(runner, sets.orgGpu!);
    const completed = exampleIn("parented", "completed", 289782451, 5_000_002, ["gpu"]);
    completed.workflow_job.runner_name = runner;
    await deliver(completed, SECRET.parented);
    expect((await instanceRow(instanceId))!.job_id).toBe(5_000_002);
  });

  it("links only runners of scale sets the delivery's signer may reach", async () => {
    // example-workflow did not opt into octo-org's scale sets: its delivery naming the gpu set's
    // runner is stored, but the runner is not its to link (nor to send away as done).
    const runner = "edgerunner-gpu-0005";
    const instanceId = await instance(runner, sets.orgGpu!);
    const before = await instanceRow(instanceId);
    const completed = exampleIn("example-workflow", "completed", 289782451, 5_000_005, ["gpu"]);
    completed.workflow_job.runner_name = runner;
    expect((await deliver(completed, SECRET.example)).body).toMatchObject({ status: "completed", matched: false });
    expect(await instanceRow(instanceId)).toEqual(before);
  });

  it("does not take an instance away from the job it already serves", async () => {
    const runner = "edgerunner-gpu-0003";
    const instanceId = await instance(runner, sets.orgGpu!, 5_000_099);
    const running = exampleIn("parented", "in_progress", 2832853555, 5_000_003, ["gpu"]);
    running.workflow_job.runner_name = runner;
    await deliver(running, SECRET.parented);
    expect((await instanceRow(instanceId))!.job_id).toBe(5_000_099);
    expect((await jobRow(5_000_003))!.runner_name).toBe(runner);
  });

  it("does not link for runners that are not ours, nor for queued events", async () => {
    const before = (await env.DB.prepare("SELECT * FROM instances ORDER BY rowid").all()).results;
    await deliver(exampleIn("example-workflow", "in_progress", 2832853555, 5_000_004, ["gpu"]), SECRET.example); // "my runner"
    expect((await env.DB.prepare("SELECT * FROM instances ORDER BY rowid").all()).results).toEqual(before);
  });
});
