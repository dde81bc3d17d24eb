/**
 * The simulator's flavor catalogue (protocol v1.2): served by default, replaceable or absent,
 * enforced for shaped creates only, and each machine's flavor, image and shape shown on the
 * runners and the timeline, where an end-to-end run reads them.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_SIMULATOR_FLAVORS, type MachineTimeline, type Simulator, startSimulator } from "../../shims/simulator/simulator.ts";
import { type FlavorCatalogue, validateFlavorCatalogue } from "../../src/providers/shim-protocol.ts";
import { createTenant } from "../fake-shim/control.ts";
import { protocolClient } from "../fake-shim/protocol-client.ts";

const SECRET = "simulator-flavors-secret-0001";
const sims: Simulator[] = [];
// Where the machines boot to: it knows none of them, so each fails at once instead of retrying a coordinator.
let nobody: Server;
let nobodyUrl: string;

beforeAll(async () => {
  nobody = createServer((req, res) => {
    req.resume();
    res.writeHead(404).end();
  });
  await new Promise<void>((r) => nobody.listen(0, "127.0.0.1", () => r()));
  nobodyUrl = `http://127.0.0.1:${(nobody.address() as AddressInfo).port}`;
});
afterAll(async () => {
  for (const s of sims) await s.stop();
  await new Promise((r) => nobody.close(r));
});

async function simulator(flavors?: FlavorCatalogue | null) {
  const sim = await startSimulator({ config: { boot_delay_ms: 0 }, ...(flavors !== undefined ? { flavors } : {}) });
  sims.push(sim);
  const tenant = await createTenant(sim.url, { secret: SECRET });
  const c = protocolClient(tenant.url, SECRET);
  const create = (name: string, over: Record<string, unknown>) =>
    c.create(name, { "metadata-url": nobodyUrl, "callback-url": nobodyUrl, ...over });
  return { sim, tenant, c, create };
}

const control = async <T>(sim: Simulator, path: string) => (await (await fetch(`${sim.url}/_control/simulator/${path}`)).json()) as T;

describe("the simulator's flavor catalogue", () => {
  it("the default is a valid catalogue mixing architectures, families, prices, spot, a fixed disk and a GPU", () => {
    expect(validateFlavorCatalogue(DEFAULT_SIMULATOR_FLAVORS).ok).toBe(true);
    const f = DEFAULT_SIMULATOR_FLAVORS.flavors;
    expect(new Set(f.map((x) => x.architecture))).toEqual(new Set(["amd64", "arm64"]));
    expect(new Set(f.map((x) => x.family)).size).toBeGreaterThanOrEqual(5);
    expect(f.some((x) => x.price_per_hour === null) && f.some((x) => x.price_per_hour !== null)).toBe(true);
    expect(f.some((x) => x.spot) && f.some((x) => !x.spot)).toBe(true);
    expect(f.some((x) => x.disk_gb !== null) && f.some((x) => x.gpu)).toBe(true);
  });

  it("serves it by default, beside batch create", async () => {
    const { c } = await simulator();
    expect((await c.send("GET", "/v1/capabilities")).body).toMatchObject({
      interface_version: "v1.2",
      flavors: true,
      batch_create: { max: 100 },
    });
    expect((await c.send("GET", "/v1/flavors")).body).toEqual(DEFAULT_SIMULATOR_FLAVORS);
  });

  it("takes another, or none (a v1.1 shim)", async () => {
    const mine: FlavorCatalogue = { currency: "USD", flavors: [DEFAULT_SIMULATOR_FLAVORS.flavors[0]!] };
    expect((await (await simulator(mine)).c.send("GET", "/v1/flavors")).body).toEqual(mine);
    const { c } = await simulator(null);
    expect((await c.send("GET", "/v1/capabilities")).body).toMatchObject({ interface_version: "v1.1" });
    expect((await c.send("GET", "/v1/capabilities")).body.flavors).toBeUndefined();
    expect((await c.send("GET", "/v1/flavors")).status).toBe(404);
    // Per tenant: one created without a catalogue on a simulator that has the default.
    const { sim } = await simulator();
    const bare = await createTenant(sim.url, { secret: SECRET, flavors: null });
    expect((await protocolClient(bare.url, SECRET).send("GET", "/v1/flavors")).status).toBe(404);
  });
});

describe("machines and their flavors", () => {
  it("a shaped create must name a catalogued flavor (400 naming it); an unshaped one may name any, as a v1 scale set's", async () => {
    const { create, tenant } = await simulator();
    const refused = await create("m-1", { flavor: "huge", shape: { disk_gb: null, spot: false } });
    expect([refused.status, refused.body.error]).toEqual([400, 'cannot create m-1: flavor "huge" is not in this shim\'s flavor catalogue']);
    expect((await create("m-2", { flavor: "huge" })).status).toBe(201);
    expect((await tenant.machines()).map((m) => m.name)).toEqual(["m-2"]);
  });

  it("each machine's flavor, image and shape are on the runners and the timeline, and stay there once it is deleted", async () => {
    const { sim, create, c } = await simulator();
    const shaped = await create("m-1", {
      flavor: "a1.medium",
      arch: "arm64",
      image: "ubuntu-24.04-arm",
      shape: { disk_gb: null, spot: true },
    });
    expect(shaped.status).toBe(201);
    expect((await create("m-2", { flavor: "small", image: "ubuntu:24.04" })).status).toBe(201);
    const runners = await control<{ name: string; flavor: string; image: string; shape: unknown }[]>(sim, "runners");
    expect(runners.map((r) => [r.name, r.flavor, r.image, r.shape])).toEqual([
      ["m-1", "a1.medium", "ubuntu-24.04-arm", { disk_gb: null, spot: true }],
      ["m-2", "small", "ubuntu:24.04", null],
    ]);
    expect((await c.send("DELETE", `/v1/instances/${shaped.body.provider_id}`)).status).toBe(204);
    const timeline = await control<MachineTimeline[]>(sim, "timeline");
    expect(timeline.map((t) => [t.name, t.flavor, t.image, t.shape, t.deleted_at !== null])).toEqual([
      ["m-1", "a1.medium", "ubuntu-24.04-arm", { disk_gb: null, spot: true }, true],
      ["m-2", "small", "ubuntu:24.04", null, false],
    ]);
  });
});
