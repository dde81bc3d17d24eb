// Protocol v1.2 in the fake shim: a tenant's flavor catalogue set on the control API, the
// capabilities and GET /v1/flavors that follow from it, shaped creates checked against it, and
// what each create asked for kept for tests; tenants without a catalogue answer as before.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { FlavorCatalogue } from "../../src/providers/shim-protocol";
import { createTenant } from "./control";
import { protocolClient } from "./protocol-client";
import { createsAsked } from "./requests";
import { type FakeShim, startFakeShim } from "./server";

const SECRET = "fake-shim-flavors-secret";
let shim: FakeShim;
beforeAll(async () => {
  shim = await startFakeShim();
});
afterAll(() => shim.stop());

const catalogue: FlavorCatalogue = {
  currency: "EUR",
  flavors: [
    {
      name: "x.small",
      vcpus: 2,
      memory_mib: 4096,
      architecture: "amd64",
      family: "x",
      gpu: null,
      disk_gb: null,
      price_per_hour: 0.01,
      spot: true,
    },
    {
      name: "x.disk",
      vcpus: 4,
      memory_mib: 8192,
      architecture: "amd64",
      family: "x",
      gpu: null,
      disk_gb: 80,
      price_per_hour: 0.02,
      spot: false,
    },
    {
      name: "a.small",
      vcpus: 2,
      memory_mib: 4096,
      architecture: "arm64",
      family: "a",
      gpu: null,
      disk_gb: null,
      price_per_hour: null,
      spot: true,
    },
  ],
};
const shape = (over: Partial<{ disk_gb: number | null; spot: boolean }> = {}) => ({ shape: { disk_gb: null, spot: false, ...over } });

describe("the fake shim's flavor catalogue", () => {
  it("a tenant without one is a v1 shim as before: no flavors route, and a shape is ignored", async () => {
    const t = await createTenant(shim.url, { secret: SECRET });
    const c = protocolClient(t.url, SECRET);
    expect((await c.send("GET", "/v1/capabilities")).body).toEqual({ interface_version: "v1", async: true, idempotent_create: true });
    expect((await c.send("GET", "/v1/flavors")).status).toBe(404);
    expect((await c.create("r-1", { flavor: "anything", ...shape({ spot: true }) })).status).toBe(201);
    const batch = await createTenant(shim.url, { secret: SECRET, batchCreateMax: 3 });
    expect((await protocolClient(batch.url, SECRET).send("GET", "/v1/capabilities")).body).toEqual({
      interface_version: "v1.1",
      async: true,
      idempotent_create: true,
      batch_create: { max: 3 },
    });
  });

  it("a tenant with one says v1.2 with flavors (and its batch create), and serves it signed, to faults and latency too", async () => {
    const t = await createTenant(shim.url, { secret: SECRET, batchCreateMax: 2, flavors: catalogue });
    const c = protocolClient(t.url, SECRET);
    expect((await c.send("GET", "/v1/capabilities")).body).toEqual({
      interface_version: "v1.2",
      async: true,
      idempotent_create: true,
      batch_create: { max: 2 },
      flavors: true,
    });
    expect(await c.send("GET", "/v1/flavors")).toEqual({ status: 200, body: catalogue });
    expect((await c.send("GET", "/v1/flavors", undefined, { unsigned: true })).status).toBe(401);
    await t.addRule({ operation: "flavors", action: { type: "respond", status: 200, body: { flavors: [{ name: "broken" }] } } });
    expect((await c.send("GET", "/v1/flavors")).body).toEqual({ flavors: [{ name: "broken" }] });
    await t.setFaults({ latency_ms: { flavors: 150 } });
    const started = Date.now();
    expect((await c.send("GET", "/v1/flavors")).status).toBe(200);
    expect(Date.now() - started).toBeGreaterThanOrEqual(140);
    expect((await t.requests()).filter((r) => r.operation === "flavors").map((r) => r.status)).toEqual([200, 401, 200, 200]);
  });

  it("the control API sets, replaces and removes a tenant's catalogue, and refuses one the coordinator would", async () => {
    const t = await createTenant(shim.url, { secret: SECRET });
    const c = protocolClient(t.url, SECRET);
    await t.configure({ flavors: catalogue });
    expect((await c.send("GET", "/v1/capabilities")).body.interface_version).toBe("v1.2");
    await t.configure({ flavors: null });
    expect((await c.send("GET", "/v1/capabilities")).body).toEqual({ interface_version: "v1", async: true, idempotent_create: true });
    const twice = { flavors: [catalogue.flavors[0], catalogue.flavors[0]] };
    await expect(t.configure({ flavors: twice as FlavorCatalogue })).rejects.toThrow(/400 .*x\.small appears twice/);
    await expect(createTenant(shim.url, { secret: SECRET, flavors: { flavors: [{ name: "x" }] } as never })).rejects.toThrow(/400/);
    // A reset forgets machines and faults, not what the tenant offers.
    await t.configure({ flavors: catalogue });
    await t.reset();
    expect((await c.send("GET", "/v1/flavors")).status).toBe(200);
  });
});

describe("shaped creates on a tenant with a catalogue", () => {
  it("refuses what the catalogue cannot make, naming it: an unknown flavor, another architecture, spot, a larger disk", async () => {
    const t = await createTenant(shim.url, { secret: SECRET, flavors: catalogue });
    const c = protocolClient(t.url, SECRET);
    const refused = [
      await c.create("r-1", { flavor: "small", ...shape() }),
      await c.create("r-2", { flavor: "a.small", arch: "amd64", ...shape() }),
      await c.create("r-3", { flavor: "x.disk", ...shape({ spot: true }) }),
      await c.create("r-4", { flavor: "x.disk", ...shape({ disk_gb: 100 }) }),
    ];
    expect(refused.map((r) => [r.status, r.body.error])).toEqual([
      [400, 'cannot create r-1: flavor "small" is not in this shim\'s flavor catalogue'],
      [400, "cannot create r-2: flavor a.small is arm64, and the create asks for amd64"],
      [400, "cannot create r-3: flavor x.disk is not offered on spot capacity"],
      [400, "cannot create r-4: flavor x.disk comes with a 80 GB disk, smaller than the 100 GB asked"],
    ]);
    expect(await t.machines()).toEqual([]);
    // Without a shape (a v1 scale set's machine), any flavor is made, as before.
    expect((await c.create("r-5", { flavor: "small" })).status).toBe(201);
  });

  it("makes what it can, and keeps each machine's and each create's flavor, image and shape, batch items too", async () => {
    const t = await createTenant(shim.url, { secret: SECRET, batchCreateMax: 4, flavors: catalogue });
    const c = protocolClient(t.url, SECRET);
    expect((await c.create("r-1", { flavor: "x.disk", image: "img-1", ...shape({ disk_gb: 80 }) })).status).toBe(201);
    expect((await c.create("r-2", { flavor: "x.small", image: "img-2", ...shape({ spot: true }) })).status).toBe(201);
    expect((await c.create("r-3", { flavor: "legacy", image: "img-3" })).status).toBe(201);
    const batch = await c.send("POST", "/v1/instances:batch", {
      instances: [c.bootstrap("b-1", { flavor: "a.small", arch: "arm64", ...shape() }), c.bootstrap("b-2", { flavor: "nope", ...shape() })],
    });
    expect(batch.body.results.map((r: { name: string; status: number }) => [r.name, r.status])).toEqual([
      ["b-1", 201],
      ["b-2", 400],
    ]);
    const machines = Object.fromEntries((await t.machines()).map((m) => [m.name, [m.flavor, m.image, m.shape]]));
    expect(machines).toEqual({
      "r-1": ["x.disk", "img-1", { disk_gb: 80, spot: false }],
      "r-2": ["x.small", "img-2", { disk_gb: null, spot: true }],
      "r-3": ["legacy", "img-3", null],
      "b-1": ["a.small", "ubuntu:24.04", { disk_gb: null, spot: false }],
    });
    expect(createsAsked(await t.requests()).map((a) => [a.name, a.status, a.flavor, a.shape])).toEqual([
      ["r-1", 201, "x.disk", { disk_gb: 80, spot: false }],
      ["r-2", 201, "x.small", { disk_gb: null, spot: true }],
      ["r-3", 201, "legacy", null],
      ["b-1", 201, "a.small", { disk_gb: null, spot: false }],
      ["b-2", 400, "nope", { disk_gb: null, spot: false }],
    ]);
  });
});
