import { env } from "cloudflare:workers";
import { describe, expect, inject, it } from "vitest";
import type { FlavorCatalogue } from "../../src/providers/shim-protocol";
import { createTenant } from "../fake-shim/control";
import { machineShape, SHAPE_BOUNDS } from "../fixtures/shaped";
import { api, insertInstance, seed, unique } from "./helpers";
import { login, ui } from "./ui-helpers";

// Shaped scale sets on the dashboard: the bounds and the queue time by shape on the scale set
// page, each machine's flavor and shape, a refused job's reason on /ui/jobs, and the setup
// page's form creating a shaped scale set. Rows a live shim would make are written to D1 directly.

const csrfOf = (html: string) => /name="_csrf" value="([^"]+)"/.exec(html)?.[1] ?? null;

const BOUNDS = SHAPE_BOUNDS;

const flavor = (name: string, vcpus: number, gb: number, architecture: "amd64" | "arm64") => ({
  name,
  vcpus,
  memory_mib: gb * 1024,
  architecture,
  family: name.split(".")[0]!,
  gpu: null,
  disk_gb: null,
  price_per_hour: vcpus / 100,
  spot: true,
});
const CATALOGUE: FlavorCatalogue = {
  currency: "USD",
  flavors: [flavor("c7a.xlarge", 4, 8, "amd64"), flavor("c7g.xlarge", 4, 16, "arm64")],
};

/** A scale set made shaped in D1, as the API would store it (the API itself needs a shim with a catalogue). */
async function shapedScaleSet() {
  const repo = await seed.repository();
  const s = await seed.scaleSet(`repositories/${repo.id}`);
  await env.DB.prepare("UPDATE scale_sets SET shape = ?, flavor = 'per-job', image = 'ami-2404' WHERE id = ?")
    .bind(JSON.stringify(BOUNDS), s.id)
    .run();
  return s as { id: string; name: string };
}

let jobId = 9_300_000;
async function insertJob(scaleSetId: string, over: Record<string, unknown>) {
  const now = Date.now();
  const row = {
    id: ++jobId,
    run_id: 1,
    name: "build",
    repository: "octo/app",
    owner: "octo",
    labels: '["self-hosted"]',
    status: "queued",
    scale_set_id: scaleSetId,
    queued_at: now - 60_000,
    created_at: now,
    updated_at: now,
    ...over,
  };
  const cols = Object.keys(row);
  await env.DB.prepare(`INSERT INTO jobs (${cols.join(",")}) VALUES (${cols.map(() => "?").join(",")})`)
    .bind(...Object.values(row))
    .run();
  return row.id;
}

describe("a shaped scale set on the dashboard", () => {
  it("shows its bounds, each machine's flavor and shape, and queue time by shape", async () => {
    const s = await shapedScaleSet();
    const now = Date.now();
    const arm = await insertInstance(s.id, { shape: JSON.stringify(machineShape({})) });
    const arm2 = await insertInstance(s.id, { shape: JSON.stringify(machineShape({ identity: "another run", job_id: 2 })) });
    const amd = await insertInstance(s.id, {
      shape: JSON.stringify(
        machineShape({ cpu: 8, ram_gb: 16, arch: "amd64", spot: false, flavor: "c7a.2xlarge", flavor_reason: "only fit" }),
      ),
    });
    // The arm shape's jobs waited 10 s and 30 s (two runs, one shape); the amd one's 90 s.
    const started = (name: string, waitMs: number) =>
      insertJob(s.id, { status: "completed", runner_name: name, queued_at: now - 120_000 - waitMs, started_at: now - 120_000 });
    await started(arm.name, 10_000);
    await started(arm2.name, 30_000);
    await started(amd.name, 90_000);

    const { cookie } = await login();
    const page = await ui("GET", `/ui/scalesets/${s.id}`, { cookie: cookie! });
    expect(page.status, page.html).toBe(200);
    expect(page.html).toMatch(
      /id="shape-bounds">2–16 vCPU, 4–64 GB memory, 10–1000 GB disk, amd64 or arm64, families c7a, c7g, spot allowed, no GPU; jobs ask with <code>edgerunner=\$\{\{ github.run_id \}\}\/cpu=…<\/code>/,
    );
    expect(page.html).toContain('id="shape-images">ubuntu-24.04 (default) = ami-2404, ubuntu-22.04 = ami-2204<');

    const row = (name: string) => new RegExp(`data-instance="${name}"[\\s\\S]*?</tr>`).exec(page.html)?.[0] ?? "";
    expect(row(arm.name)).toContain('data-flavor="true" title="cheapest (4 vCPUs, 16 GB) of 3 matching flavors">c7g.xlarge');
    expect(row(arm.name)).toContain("4 vCPU · 16 GB · arm64 · ubuntu-24.04 · spot");
    expect(row(amd.name)).toContain("8 vCPU · 16 GB · amd64 · ubuntu-24.04</div>");

    const byShape = /id="shape-queue"[\s\S]*?<\/table>/.exec(page.html)?.[0] ?? "";
    const shapeRow = (shape: string) => new RegExp(`data-shape="${shape}">([\\s\\S]*?)</tr>`).exec(byShape)?.[1] ?? "";
    const cells = (html: string) => [...html.matchAll(/<td[^>]*>([^<]*)<\/td>/g)].map((m) => m[1]);
    expect(cells(shapeRow("4 vCPU · 16 GB · arm64 · ubuntu-24.04 · spot"))).toEqual([
      "4 vCPU · 16 GB · arm64 · ubuntu-24.04 · spot",
      "2",
      "10s",
      "30s",
      "c7g.xlarge",
    ]);
    expect(cells(shapeRow("8 vCPU · 16 GB · amd64 · ubuntu-24.04"))).toEqual([
      "8 vCPU · 16 GB · amd64 · ubuntu-24.04",
      "1",
      "1m 30s",
      "1m 30s",
      "c7a.2xlarge",
    ]);
  });

  it("keeps a scale set that is not shaped as it was: its flavor on every machine, no bounds, no shape table", async () => {
    const repo = await seed.repository();
    const s = await seed.scaleSet(`repositories/${repo.id}`, { flavor: "t3.small" });
    const i = await insertInstance(s.id);
    const { cookie } = await login();
    const page = await ui("GET", `/ui/scalesets/${s.id}`, { cookie: cookie! });
    expect(page.html).toMatch(new RegExp(`data-instance="${i.name}"[\\s\\S]*?<td data-flavor="true">t3.small</td>`));
    expect(page.html).not.toContain("shape-bounds");
    expect(page.html).not.toContain("shape-queue");
  });

  it("shows why a refused job gets no machine on /ui/jobs and the scale set page", async () => {
    const s = await shapedScaleSet();
    const why = "cpu=64 is above this scale set's 16";
    const refused = await insertJob(s.id, { refusal: why });
    const fine = await insertJob(s.id, {});
    const { cookie } = await login();
    for (const path of ["/ui/jobs", `/ui/scalesets/${s.id}`]) {
      const page = await ui("GET", path, { cookie: cookie! });
      const row = (id: number) => new RegExp(`data-job="${id}"[\\s\\S]*?</tr>`).exec(page.html)?.[0] ?? "";
      expect(row(refused)).toContain(
        `<div class="small bad" data-refusal="true"><span class="badge bad">refused</span> ${why.replace("'", "&#39;")}</div>`,
      );
      expect(row(fine)).not.toContain("refused");
    }
  });
});

describe("the setup page's scale set form", () => {
  async function setup() {
    const shim = await createTenant(inject("fakeShimUrl"), { secret: "shaped-form-secret", flavors: CATALOGUE });
    const provider = unique("shim");
    expect((await api.post("/api/v1/providers", { name: provider, url: shim.url, secret: "shaped-form-secret" })).status).toBe(201);
    const repo = await seed.repository();
    const { cookie } = await login();
    const page = await ui("GET", "/ui/setup", { cookie: cookie! });
    expect(page.html).toContain('name="shape_images"');
    // The provider step names every cloud `setup --shim` deploys.
    expect(page.html).toContain("<code>npx edgerunner setup --shim aws-ec2</code> (or <code>gce</code>, or");
    const form = {
      _csrf: csrfOf(page.html)!,
      entity: `/repositories/${repo.id}/scalesets`,
      provider,
      labels: "self-hosted, linux",
      min_idle: "0",
      max_runners: "4",
    };
    return { cookie: cookie!, form, repo };
  }

  it("creates a shaped scale set from the bounds fields, sending no image or flavor", async () => {
    const { cookie, form, repo } = await setup();
    const name = unique("shaped");
    const res = await ui("POST", "/ui/setup/scaleset", {
      cookie,
      form: {
        ...form,
        name,
        image: "ignored",
        flavor: "ignored",
        shaped: "on",
        shape_cpu: "2-16",
        shape_ram: "4 – 64",
        shape_arch: "arm64, amd64",
        shape_families: "c7a c7g",
        shape_spot: "on",
        shape_images: "ubuntu-24.04=ami-2404\r\nubuntu-22.04=ami-2204\r\n",
      },
    });
    expect(res.status, res.html).toBe(303);
    const made = (await api.get(`/api/v1/repositories/${repo.id}/scalesets`)).body.find((s: { name: string }) => s.name === name);
    expect(made.flavor).toBe("per-job");
    expect(made.image).toBe("ami-2404");
    expect(made.shape).toEqual({
      key: "edgerunner",
      cpu: { min: 2, max: 16 },
      ram_gb: { min: 4, max: 64 },
      disk_gb: { min: 10, max: 1000 },
      architectures: ["arm64", "amd64"],
      families: ["c7a", "c7g"],
      spot: true,
      max_gpus: 0,
      images: { "ubuntu-24.04": "ami-2404", "ubuntu-22.04": "ami-2204" },
    });
  });

  it.each([
    [{ shape_images: "" }, "Images: a shaped scale set needs at least one, as name=image id."],
    [{ shape_images: "ami-2404" }, "Images: write each as name=image id, not &quot;ami-2404&quot;."],
    [{ shape_images: "u=a", shape_cpu: "16-2" }, "vCPUs: 16 is above 2; write the smaller number first."],
  ])("says what is wrong with the shaped fields (%j) and creates nothing", async (fields, message) => {
    const { cookie, form, repo } = await setup();
    const res = await ui("POST", "/ui/setup/scaleset", { cookie, form: { ...form, name: unique("bad"), shaped: "on", ...fields } });
    expect(res.status).toBe(400);
    expect(res.html).toContain(message);
    expect((await api.get(`/api/v1/repositories/${repo.id}/scalesets`)).body).toEqual([]);
  });

  it("without the tick box still needs an image and a flavor, and the API says so", async () => {
    const { cookie, form } = await setup();
    const res = await ui("POST", "/ui/setup/scaleset", { cookie, form: { ...form, name: unique("plain"), shape_cpu: "2-4" } });
    expect(res.status).toBe(400);
    expect(res.html).toContain("required (unless `shape` is given)");
  });
});
