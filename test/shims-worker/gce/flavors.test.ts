/**
 * Protocol v1.2 in the GCE shim Worker, against the fake Compute Engine: the capabilities, the
 * flavor catalogue (machineTypes.list in each of the pool's zones, paged, the types all of them
 * have, kept a while), and a shaped create (the job's disk and Spot over the pool's extra specs).
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { validateFlavorCatalogue } from "../../../src/providers/shim-protocol";
import { expectedGceFlavors, machineTypesIn } from "../../fake-gce/machine-types";
import { bootstrap, inserts, type ShimWorld, shimWorld } from "./harness";

let logs: string[] = [];
beforeEach(() => {
  logs = [];
  vi.spyOn(console, "log").mockImplementation((line: unknown) => void logs.push(String(line)));
});
afterEach(() => vi.restoreAllMocks());

const typeCalls = async (w: ShimWorld) => (await w.project.requests()).filter((r) => r.method === "compute.machineTypes.list");
const names = (res: { body: { flavors: { name: string }[] } }) => res.body.flavors.map((f) => f.name);

describe("capabilities and the catalogue", () => {
  it("capabilities: v1.2 with a flavor catalogue, synchronous, no batch create", async () => {
    const w = await shimWorld();
    const { status, body } = await w.call("GET", "/v1/capabilities");
    expect({ status, ...body }).toMatchObject({
      status: 200,
      interface_version: "v1.2",
      flavors: true,
      async: false,
      project: w.project.id,
    });
    expect(body.batch_create).toBeUndefined();
  });

  it("an unsigned or wrongly signed GET /v1/flavors is 401 before Google is called", async () => {
    const w = await shimWorld();
    const unsigned = await w.call("GET", "/v1/flavors", { headers: { "X-Edgerunner-Timestamp": undefined } });
    const wrong = await w.call("GET", "/v1/flavors", { secret: "another-secret-of-16-chars" });
    expect([unsigned.status, wrong.status]).toEqual([401, 401]);
    expect(await w.project.requests()).toEqual([]);
  });

  it("lists the machine types of the Worker's zones, following every page, as valid flavors", async () => {
    const w = await shimWorld();
    const res = await w.call("GET", "/v1/flavors");
    expect(res.status).toBe(200);
    expect(validateFlavorCatalogue(res.body).ok).toBe(true);
    const byName = new Map((res.body.flavors as { name: string }[]).map((f) => [f.name, f]));
    expect(byName.get("n2-standard-4")).toEqual({
      name: "n2-standard-4",
      vcpus: 4,
      memory_mib: 16384,
      architecture: "amd64",
      family: "n2",
      gpu: null,
      disk_gb: null,
      price_per_hour: null,
      spot: true,
    });
    // T2A has no architecture in the list: its series says Arm. C4A says so itself.
    expect(byName.get("t2a-standard-2")).toMatchObject({ architecture: "arm64", family: "t2a", vcpus: 2, memory_mib: 8192 });
    expect(byName.get("c4a-standard-4")).toMatchObject({ architecture: "arm64", family: "c4a" });
    expect(byName.get("g2-standard-4")).toMatchObject({ gpu: { count: 1, model: "nvidia-l4" }, family: "g2" });
    expect(byName.get("e2-small")).toMatchObject({ vcpus: 2, memory_mib: 2048, family: "e2" });
    expect(res.body.flavors).toEqual(expectedGceFlavors(["us-central1-a", "us-central1-b"]));

    // Both zones (GCE_ZONES), every page of each (the fake answers five types a page).
    const calls = await typeCalls(w);
    const pages = (zone: string) => Math.ceil(machineTypesIn(zone).length / 5);
    expect(calls).toHaveLength(pages("us-central1-a") + pages("us-central1-b"));
    expect(calls.map((c) => c.zone)).toEqual([
      ...Array(pages("us-central1-a")).fill("us-central1-a"),
      ...Array(pages("us-central1-b")).fill("us-central1-b"),
    ]);
    expect(calls.filter((c) => c.path.includes("pageToken=")).length).toBe(calls.length - 2);
  });

  it("a pool's zones decide, and only the types every one of them has are listed", async () => {
    const w = await shimWorld();
    const somewhere = await w.call("GET", "/v1/flavors", { specs: { zones: ["us-central1-a", "us-central1-c"] } });
    expect(names(somewhere)).toContain("g2-standard-4");
    expect(names(somewhere)).not.toContain("t2a-standard-2");
    expect(somewhere.body.flavors).toEqual(expectedGceFlavors(["us-central1-a", "us-central1-c"]));
    const europe = await w.call("GET", "/v1/flavors", { specs: { zones: ["europe-west1-d"] } });
    expect(names(europe).filter((n) => /^(g2|t2a)-/.test(n))).toEqual([]);
    expect(names(europe)).toContain("c4a-standard-4");
    expect(new Set((await typeCalls(w)).map((c) => c.zone))).toEqual(new Set(["us-central1-a", "us-central1-c", "europe-west1-d"]));
  });

  it("is kept for the next requests of the same project and zones: no second call to Compute Engine", async () => {
    const w = await shimWorld();
    const first = await w.call("GET", "/v1/flavors");
    const calls = (await typeCalls(w)).length;
    // The same zones in another order are the same catalogue.
    const again = await w.call("GET", "/v1/flavors", { specs: { zones: ["us-central1-b", "us-central1-a"] } });
    expect(again).toMatchObject({ status: 200, body: first.body });
    expect(await typeCalls(w)).toHaveLength(calls);
    const lines = logs.map((l) => JSON.parse(l)).filter((l) => l.event === "shim_request" && l.operation === "flavors");
    expect(lines.map((l) => [l.catalogue_cached, l.gce_calls > 0])).toEqual([
      [false, true],
      [true, false],
    ]);
  });

  it("a missing compute.machineTypes.list is 403 naming it, and is not kept", async () => {
    const w = await shimWorld({ denied_permissions: ["compute.machineTypes.list"] });
    const refused = await w.call("GET", "/v1/flavors");
    expect(refused.status).toBe(403);
    expect(refused.body.error).toMatch(/^cannot list flavors: .*compute\.machineTypes\.list/);
    await w.project.configure({ denied_permissions: [] });
    expect((await w.call("GET", "/v1/flavors")).status).toBe(200);
  });

  it("no zone anywhere, or extra specs the shim cannot read, is 400 before Google is called", async () => {
    const w = await shimWorld();
    expect((await w.call("GET", "/v1/flavors", { env: { GCE_ZONES: "" } })).body.error).toMatch(/no zone/);
    expect((await w.call("GET", "/v1/flavors", { specs: { zone: "us-central1-a" } })).status).toBe(400);
    expect(await w.project.requests()).toEqual([]);
  });
});

describe("a shaped create", () => {
  const inserted = async (w: ShimWorld) =>
    (await w.project.requests()).filter((r) => r.method === "compute.instances.insert").map((r) => r.body as Record<string, any>);

  it("the job's disk and Spot win over the pool's: an 80 GB boot disk, provisioning model SPOT", async () => {
    const w = await shimWorld();
    const b = bootstrap({
      flavor: "n2-standard-4",
      extra_specs: { capacity: "standard", disk_size_gb: 30, disk_type: "pd-ssd" },
      shape: { disk_gb: 80, spot: true },
    });
    const res = await w.call("POST", "/v1/instances", { body: b });
    expect(res.status).toBe(201);
    const [body] = await inserted(w);
    expect(body!.disks[0].initializeParams).toMatchObject({ diskSizeGb: "80", diskType: "zones/us-central1-a/diskTypes/pd-ssd" });
    expect(body!.scheduling).toMatchObject({ provisioningModel: "SPOT", instanceTerminationAction: "DELETE" });
    const [i] = await w.project.instances();
    expect(i!.disks?.[0]).toMatchObject({ diskSizeGb: "80" });
    expect(i!.scheduling?.provisioningModel).toBe("SPOT");
  });

  it("spot: true is Spot alone (every zone, no standard fallback); spot: false leaves the pool's capacity", async () => {
    const w = await shimWorld();
    await w.project.setFaults({ insert: [{ code: "ZONE_RESOURCE_POOL_EXHAUSTED", provisioning_model: "SPOT" }] });
    const spot = bootstrap({ extra_specs: { capacity: "spot-with-fallback" }, shape: { disk_gb: null, spot: true } });
    expect((await w.call("POST", "/v1/instances", { body: spot })).status).toBe(503);
    expect((await inserts(w.project)).map((i) => i.model)).toEqual(["SPOT", "SPOT"]);
    // Nothing asked for a disk size: the image's.
    expect((await inserted(w))[0]!.disks[0].initializeParams.diskSizeGb).toBeUndefined();

    await w.project.reset();
    await w.project.setFaults({ insert: [{ code: "ZONE_RESOURCE_POOL_EXHAUSTED", provisioning_model: "SPOT" }] });
    const pools = bootstrap({ extra_specs: { capacity: "spot-with-fallback" }, shape: { disk_gb: null, spot: false } });
    expect((await w.call("POST", "/v1/instances", { body: pools })).status).toBe(201);
    expect((await inserts(w.project)).map((i) => i.model)).toEqual(["SPOT", "SPOT", "STANDARD"]);
  });

  it("a disk under Compute Engine's smallest boot disk is 400, before Google is called", async () => {
    const w = await shimWorld();
    const res = await w.call("POST", "/v1/instances", { body: bootstrap({ shape: { disk_gb: 5, spot: false } }) });
    expect(res.status).toBe(400);
    expect(res.body.error).toContain("shape.disk_gb 5 is under Compute Engine's smallest boot disk, 10 GB");
    expect(await w.project.requests()).toEqual([]);
  });
});
