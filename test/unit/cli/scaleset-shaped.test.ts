import { describe, expect, it } from "vitest";
import { machineShape, SHAPE_BOUNDS } from "../../fixtures/shaped";
import { json, runCli } from "./run-cli.ts";

// `scaleset create --shaped` and its bounds, and where a shape shows: `scaleset show`,
// `instance list` (FLAVOR) and `instance show`, against a fake API.

const ID = "0b9e7b1c-5f7a-4d3e-9a51-3c2f8e1d4a70";
const OTHER = "5d0c8a9e-2b1f-4c3d-8e7f-6a5b4c3d2e1f";
const run = (argv: string[], answer: (req: Request) => Response | Promise<Response>) => runCli(argv, answer, { env: {} });
const create = (...more: string[]) =>
  run(["scaleset", "create", "--repo", ID, "--name", "shaped", "--provider", "aws", "--max-runners", "20", ...more, "--json"], () =>
    json(201, { id: ID }),
  );

const BOUNDS = SHAPE_BOUNDS;

const SHAPE = machineShape();

const instance = (name: string, over: Record<string, unknown>) => ({
  id: ID,
  name,
  scale_set_id: ID,
  provider_id: null,
  status: "running",
  runner_status: "idle",
  agent_id: null,
  reported_agent_id: null,
  addresses: [],
  os_type: "linux",
  os_name: null,
  os_version: null,
  os_arch: "arm64",
  create_attempt: 1,
  status_message: null,
  provider_fault: null,
  job_id: null,
  flavor: null,
  shape: null,
  created_at: "2026-11-26T00:00:00.000Z",
  updated_at: "2026-11-26T00:00:00.000Z",
  status_changed_at: "2026-11-26T00:00:00.000Z",
  ...over,
});

describe("scaleset create --shaped", () => {
  it("sends the bounds, the images as a map, and neither image nor flavor", async () => {
    const r = await create(
      "--shaped",
      "--cpu",
      "2-16",
      "--ram",
      "4-64",
      "--disk",
      "80",
      "--arch",
      "amd64,arm64",
      "--families",
      "c7a,m7a",
      "--spot",
      "--max-gpus",
      "1",
      "--shape-key",
      "shape",
      "--image",
      "ubuntu-22.04=ami-2204",
      "--image",
      "ubuntu-24.04=ami-2404",
      "--default-image",
      "ubuntu-24.04",
    );
    expect(r.code, r.stderr).toBe(0);
    const body = (await r.requests.at(-1)!.json()) as { shape: unknown };
    expect(body).not.toHaveProperty("image");
    expect(body).not.toHaveProperty("flavor");
    expect(body.shape).toEqual({
      key: "shape",
      cpu: { min: 2, max: 16 },
      ram_gb: { min: 4, max: 64 },
      disk_gb: { min: 80, max: 80 },
      architectures: ["amd64", "arm64"],
      families: ["c7a", "m7a"],
      spot: true,
      max_gpus: 1,
      images: { "ubuntu-22.04": "ami-2204", "ubuntu-24.04": "ami-2404" },
      default_image: "ubuntu-24.04",
    });
  });

  it("sends only what is given, leaving the rest to the API's defaults", async () => {
    const r = await create("--shaped", "--image", "ubuntu-24.04=ami-2404");
    expect(r.code, r.stderr).toBe(0);
    expect(((await r.requests.at(-1)!.json()) as { shape: unknown }).shape).toEqual({ images: { "ubuntu-24.04": "ami-2404" } });
  });

  it.each([
    [["--shaped"], "--image NAME=ID is required with --shaped"],
    [["--shaped", "--image", "ami-2404"], '--image: NAME=ID with --shaped (ubuntu-24.04=ami-0123456789abcdef0), not "ami-2404"'],
    [["--shaped", "--image", "u=a", "--image", "u=b"], "--image: u given twice"],
    [["--shaped", "--image", "u=a", "--cpu", "16-2"], "--cpu: 16 is above 2; write the smaller number first"],
    [["--shaped", "--image", "u=a", "--ram", "lots"], '--ram: a range such as 1-64 (or one number), not "lots"'],
    [["--shaped", "--image", "u=a", "--flavor", "m7a.large"], "--flavor: a shaped scale set's flavor is chosen per job"],
    [["--shaped", "--image", "u=a", "--os-arch", "arm64"], "--os-arch: with --shaped give --arch"],
    [["--image", "i", "--flavor", "f", "--cpu", "1-4", "--spot"], "--cpu, --spot: only with --shaped"],
    [["--image", "i", "--image", "j", "--flavor", "f"], "--image: give it once (several, as NAME=ID, only with --shaped)"],
    [["--image", "i"], "--flavor is required"],
  ])("refuses %j before sending anything", async (more, message) => {
    const r = await create(...more);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(message);
    expect(r.requests).toEqual([]);
  });

  it("without --shaped still sends one image and a flavor", async () => {
    const r = await create("--image", "ubuntu-24.04", "--flavor", "t3.small");
    expect(r.code, r.stderr).toBe(0);
    expect(await r.requests.at(-1)!.json()).toMatchObject({ image: "ubuntu-24.04", flavor: "t3.small" });
  });
});

describe("shapes in show and list", () => {
  it("scaleset show prints the bounds in a line and the images with the default first", async () => {
    const r = await run(["scaleset", "show", ID], () =>
      json(200, { id: ID, name: "shaped", flavor: "per-job", shape: BOUNDS, schedules: [] }),
    );
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(
      /^shape: +key edgerunner; cpu 2-16; ram 4-64 GB; disk 10-1000 GB; arch amd64,arm64; families c7a,c7g; spot allowed; gpus ≤0$/m,
    );
    expect(r.stdout).toMatch(/^shape_images: +ubuntu-24.04=ami-2404 \(default\), ubuntu-22.04=ami-2204$/m);
    expect(r.stdout).not.toContain("shape.cpu");
  });

  it("instance list shows a shaped machine's flavor and the others' scale set's", async () => {
    const r = await run(["instance", "list"], (req) =>
      new URL(req.url).pathname === "/api/v1/scalesets"
        ? json(200, [{ id: OTHER, flavor: "t3.small" }])
        : json(200, [
            instance("shaped-1", { flavor: "c7g.xlarge", shape: SHAPE }),
            instance("plain-1", { scale_set_id: OTHER, os_arch: "amd64" }),
          ]),
    );
    expect(r.code, r.stderr).toBe(0);
    const [header, shaped, plain] = r.stdout.split("\n");
    const at = header!.indexOf("FLAVOR");
    expect(at).toBeGreaterThan(0);
    expect(shaped!.slice(at)).toMatch(/^c7g\.xlarge /);
    expect(plain!.slice(at)).toMatch(/^t3\.small /);
  });

  it("instance list asks for no scale sets when every machine has its own flavor", async () => {
    const r = await run(["instance", "list"], () => json(200, [instance("shaped-1", { flavor: "c7g.xlarge", shape: SHAPE })]));
    expect(r.code, r.stderr).toBe(0);
    expect(r.requests.map((q) => new URL(q.url).pathname)).toEqual(["/api/v1/instances"]);
  });

  it("instance show prints the shape in a line and why its flavor", async () => {
    const r = await run(["instance", "show", "shaped-1"], () =>
      json(200, { ...instance("shaped-1", { flavor: "c7g.xlarge", shape: SHAPE }), transitions: [] }),
    );
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^flavor: +c7g\.xlarge$/m);
    expect(r.stdout).toMatch(/^shape: +4 vCPU · 16 GB · arm64 · ubuntu-24.04 · spot$/m);
    expect(r.stdout).toMatch(/^flavor_reason: +cheapest \(4 vCPUs, 16 GB\) of 3 matching flavors$/m);
  });
});
