import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, inject, it } from "vitest";
import { loadRunnerSetup } from "../../src/db/scaleset/runner-setup-store";
import { loadScaleSetSnapshot } from "../../src/db/scaleset/snapshot-store";
import { expectedEc2Flavors } from "../fake-ec2/instance-types";
import { createTenant, type FakeShimTenant } from "../fake-shim/control";
import { createsAsked } from "../fake-shim/requests";
import { clone, exampleFor } from "../fixtures/webhook-examples";
import { createEndpoint, createPatCredential, newWorld } from "./github-helpers";
import { api, expectRejectedWithoutWrites, unique } from "./helpers";
import { reconcile } from "./scaleset-world";
import { deliver, jobRow } from "./webhook-setup";

// A shaped scale set (src/shapes) end to end inside workerd: a job's shape label, through the
// webhook, the object's judgement and the flavor catalogue of a v1.2 fake shim (the fake EC2's
// instance types), to one machine of the chosen flavor and image, or to a refusal that says why.

const SHIM_SECRET = "shaped-shim-secret-0123456789";
const WEBHOOK_SECRET = "whsec-shaped-0123";
const RUN_ID = 777_001;
// The fake GitHub's endpoint (github-helpers.ts createEndpoint) is a GHES host: its hooks say so.
const FROM = { headers: { "x-github-enterprise-host": "github.example.test" } };
const BOUNDS = {
  cpu: { min: 2, max: 16 },
  ram_gb: { min: 2, max: 64 },
  architectures: ["amd64", "arm64"],
  spot: true,
  images: { "ubuntu-24.04": "ami-0aaaaaaaaaaaaaaa1", "ubuntu-22.04": "ami-0bbbbbbbbbbbbbbb2" },
};

let shim: FakeShimTenant;
let repoId: string;
let owner: string;
let providerName: string;
let scaleSetId: string;
let nextJob = 6_200_000 + Math.floor(Math.random() * 100_000) * 10;

function queued(labels: string[], runId = RUN_ID) {
  const p = clone(exampleFor("queued", 289782451).payload);
  p.repository.owner.login = owner;
  p.repository.name = "app";
  p.repository.full_name = `${owner}/app`;
  p.workflow_job.id = nextJob++;
  p.workflow_job.run_id = runId;
  p.workflow_job.labels = labels;
  return p;
}

const liveInstances = async () =>
  (
    await env.DB.prepare("SELECT name, shape FROM instances WHERE scale_set_id = ? AND status != 'deleted'")
      .bind(scaleSetId)
      .all<{ name: string; shape: string | null }>()
  ).results;

beforeAll(async () => {
  const github = await newWorld();
  const credentialsId = await createPatCredential(await createEndpoint(github));
  const creds = (await api.get(`/api/v1/github/credentials/${credentialsId}`)).body;
  owner = unique("shaped").toLowerCase();
  const repo = await api.post("/api/v1/repositories", { owner, name: "app", credentials_name: creds.name, webhook_secret: WEBHOOK_SECRET });
  repoId = repo.body.id;
  shim = await createTenant(inject("fakeShimUrl"), { secret: SHIM_SECRET, flavors: { flavors: expectedEc2Flavors(), currency: "USD" } });
  providerName = (await api.post("/api/v1/providers", { name: unique("ec2"), url: shim.url, secret: SHIM_SECRET })).body.name;
  const ss = await api.post(`/api/v1/repositories/${repoId}/scalesets`, {
    name: unique("shaped"),
    provider_name: providerName,
    labels: ["self-hosted"],
    max_runners: 10,
    shape: BOUNDS,
  });
  if (ss.status !== 201) throw new Error(ss.text);
  scaleSetId = ss.body.id;
});

describe("a shaped scale set", () => {
  it("makes a shaped job one machine of the chosen flavor, with the allow-listed image and the job's shape label", async () => {
    const label = `edgerunner=${RUN_ID}/cpu=4/ram=16/arch=arm64/image=ubuntu-22.04/disk=80/spot=true`;
    const sent = await deliver(queued(["self-hosted", label]), WEBHOOK_SECRET, FROM);
    expect(sent.body).toMatchObject({ scale_set_id: scaleSetId });
    await reconcile(scaleSetId);

    const asked = createsAsked(await shim.requests()).filter((c) => c.pool_id === scaleSetId);
    expect(asked).toHaveLength(1);
    // m7g.xlarge: the smallest arm64 type with 4 vCPUs and 16 GB in the fake EC2's table (c7g.xlarge has 8 GB).
    expect(asked[0]).toMatchObject({ flavor: "m7g.xlarge", image: "ami-0bbbbbbbbbbbbbbb2", shape: { disk_gb: 80, spot: true } });
    const [machine] = await liveInstances();
    const shape = JSON.parse(machine!.shape!);
    expect(shape).toMatchObject({ flavor: "m7g.xlarge", image: "ubuntu-22.04", cpu: 4, ram_gb: 16, arch: "arm64", labels: [label] });
    expect(shape.flavor_reason).toMatch(/^smallest \(4 vCPUs, 16 GB\) of \d+ matching flavors/);
    // The runner it boots registers with the job's shape label beside the scale set's.
    expect((await loadRunnerSetup(env.DB, scaleSetId, machine!.name))!.labels).toEqual(["self-hosted", label]);
    // The API shows the flavor and the shape.
    const listed = (await api.get(`/api/v1/scalesets/${scaleSetId}/instances`)).body;
    expect(listed.find((i: { name: string }) => i.name === machine!.name)).toMatchObject({
      flavor: "m7g.xlarge",
      shape: { image_id: "ami-0bbbbbbbbbbbbbbb2" },
    });

    // Another pass makes nothing more: the job has its machine.
    await reconcile(scaleSetId);
    expect(createsAsked(await shim.requests()).filter((c) => c.pool_id === scaleSetId)).toHaveLength(1);
  });

  it("makes nothing for a job outside the bounds, and says why on its row and in the API", async () => {
    const before = createsAsked(await shim.requests()).filter((c) => c.pool_id === scaleSetId).length;
    const cases: [string[], number, string][] = [
      [[`edgerunner=${RUN_ID}/cpu=128`], RUN_ID, "cpu=128 is above this scale set's 16"],
      [
        [`edgerunner=${RUN_ID}/image=windows-2022`],
        RUN_ID,
        "image=windows-2022 is not one of this scale set's images (ubuntu-24.04, ubuntu-22.04)",
      ],
      [[`edgerunner=${RUN_ID}/cpux=4`], RUN_ID, "unknown field cpux"],
      [["edgerunner=123/cpu=4"], RUN_ID, `the label's run id 123 is not this job's run (${RUN_ID})`],
      [[`edgerunner=${RUN_ID}/cpu=16/ram=64/arch=arm64`], RUN_ID, "none of them is with 16 vCPUs or more"],
    ];
    const ids: number[] = [];
    for (const [labels, runId] of cases) {
      const p = queued(labels, runId);
      ids.push(p.workflow_job.id);
      expect((await deliver(p, WEBHOOK_SECRET, FROM)).body).toMatchObject({ scale_set_id: scaleSetId });
    }
    await reconcile(scaleSetId);
    expect(createsAsked(await shim.requests()).filter((c) => c.pool_id === scaleSetId)).toHaveLength(before);
    for (const [i, [, , why]] of cases.entries()) {
      expect((await jobRow(ids[i]!))!.refusal).toContain(why);
    }
    const jobs = (await api.get(`/api/v1/jobs?scaleset_id=${scaleSetId}&status=queued`)).body.jobs;
    expect(jobs.find((j: { id: number }) => j.id === ids[0])).toMatchObject({ refusal: "cpu=128 is above this scale set's 16" });
    // A refused job is not demand: only the first test's job (which has its machine) is.
    const snapshot = await loadScaleSetSnapshot(env.DB, scaleSetId);
    expect(snapshot.queuedJobs).toBe(1);
    expect(snapshot.shapedQueue.map((j) => j.id)).toHaveLength(1);
  });

  it("is refused, with the reason, on a provider whose shim has no flavor catalogue", async () => {
    const plain = await createTenant(inject("fakeShimUrl"), { secret: SHIM_SECRET });
    const name = (await api.post("/api/v1/providers", { name: unique("v1"), url: plain.url, secret: SHIM_SECRET })).body.name;
    const res = await expectRejectedWithoutWrites(400, () =>
      api.post(`/api/v1/repositories/${repoId}/scalesets`, {
        name: unique("shaped"),
        provider_name: name,
        labels: ["self-hosted"],
        max_runners: 4,
        shape: BOUNDS,
      }),
    );
    expect(JSON.stringify(res.body.details)).toContain(`provider '${name}' has no flavor catalogue (its shim speaks protocol v1`);
  });

  it("refuses what a shaped scale set cannot be: idle runners, a bound that does not hold", async () => {
    const base = { name: unique("shaped"), provider_name: providerName, labels: ["self-hosted"], max_runners: 4 };
    const create = (body: Record<string, unknown>) =>
      expectRejectedWithoutWrites(400, () => api.post(`/api/v1/repositories/${repoId}/scalesets`, body));
    const idle = await create({ ...base, shape: BOUNDS, min_idle_runners: 1 });
    expect(JSON.stringify(idle.body.details)).toContain("keeps no idle runners");
    const inverted = await create({ ...base, shape: { ...BOUNDS, cpu: { min: 8, max: 4 } } });
    expect(JSON.stringify(inverted.body.details)).toContain("min must not be above max");
    const noImages = await create({ ...base, shape: { ...BOUNDS, images: {} } });
    expect(JSON.stringify(noImages.body.details)).toContain("between 1 and 50 images");
    const unknownDefault = await create({ ...base, shape: { ...BOUNDS, default_image: "fedora-41" } });
    expect(JSON.stringify(unknownDefault.body.details)).toContain("fedora-41 is not one of images");
    const unshaped = await create(base);
    expect(JSON.stringify(unshaped.body.details)).toContain("required (unless `shape` is given)");
  });

  it("cannot make an unshaped scale set shaped (409), and takes new bounds for a shaped one", async () => {
    const plain = await api.post(`/api/v1/repositories/${repoId}/scalesets`, {
      name: unique("plain"),
      provider_name: providerName,
      labels: ["self-hosted", "plain"],
      max_runners: 2,
      image: "ami-0aaaaaaaaaaaaaaa1",
      flavor: "t3.large",
    });
    expect(plain.status, plain.text).toBe(201);
    await expectRejectedWithoutWrites(409, () => api.put(`/api/v1/scalesets/${plain.body.id}`, { shape: BOUNDS }));
    const widened = await api.put(`/api/v1/scalesets/${scaleSetId}`, { shape: { ...BOUNDS, cpu: { min: 2, max: 32 } } });
    expect(widened.status, widened.text).toBe(200);
    expect(widened.body.shape.cpu).toEqual({ min: 2, max: 32 });
  });
});
