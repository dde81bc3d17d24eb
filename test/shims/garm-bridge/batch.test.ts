// Protocol v1.1 batch create on the bridge: each instance runs CreateInstance exactly as a
// single create would (idempotent on its name, within the concurrency limit), a bad batch is
// refused whole before any provider call, and the coordinator's client reads it.
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createShimClient } from "../../../src/providers/shim-client";
import {
  bootstrap,
  CONTROLLER,
  makeProviderWorld,
  POOL,
  type ProviderWorld,
  SECRET,
  send,
  startTestBridge,
  type TestBridge,
} from "./harness";

let world: ProviderWorld;
let bridge: TestBridge;
beforeAll(async () => {
  world = makeProviderWorld();
  bridge = await startTestBridge(world);
});
afterAll(async () => {
  await bridge.stop();
  world.cleanup();
});
afterEach(() => {
  world.configure({});
  world.clearCalls();
});

const batch = (items: unknown[]) => send(bridge, "POST", "/v1/instances:batch", JSON.stringify({ instances: items }));
const creates = () => world.calls().filter((c) => c.command === "CreateInstance");

describe("batch create", () => {
  it("offers its concurrency as the largest batch", async () => {
    const caps = await send(bridge, "GET", "/v1/capabilities");
    expect(caps.body).toMatchObject({ interface_version: "v1.1", batch_create: { max: 4 } });
  });

  it("creates every instance, each with its own BootstrapInstance on stdin, answered in order", async () => {
    const items = ["batch-a", "batch-b", "batch-c"].map((n) => bootstrap(n));
    const res = await batch(items);
    expect(res.status).toBe(200);
    expect(res.body.results).toEqual(
      items.map((b) => ({ name: b.name, status: 201, body: expect.objectContaining({ name: b.name, provider_id: `vm-${b.name}` }) })),
    );
    expect(
      creates()
        .map((c) => JSON.parse(c.stdin))
        .sort((x, y) => x.name.localeCompare(y.name)),
    ).toEqual(items);
  });

  it("is idempotent per name: a repeated batch answers the same machines without a second CreateInstance", async () => {
    const items = ["batch-r1", "batch-r2"].map((n) => bootstrap(n));
    await batch(items);
    world.clearCalls();
    const again = await batch(items);
    expect(again.body.results.map((r: { status: number; body: { provider_id: string } }) => [r.status, r.body.provider_id])).toEqual([
      [200, "vm-batch-r1"],
      [200, "vm-batch-r2"],
    ]);
    expect(creates()).toEqual([]);
  });

  it("fails only the instance whose CreateInstance failed", async () => {
    world.configure({ fail_names: ["batch-f2"] });
    const res = await batch(["batch-f1", "batch-f2", "batch-f3"].map((n) => bootstrap(n)));
    expect(res.status).toBe(200);
    expect(res.body.results.map((r: { status: number }) => r.status)).toEqual([201, 500, 201]);
    expect(res.body.results[1].body.error).toContain("no capacity for batch-f2");
  });

  it.each([
    ["an invalid instance", [bootstrap("batch-x1"), bootstrap("batch-x2", { arch: "x86_64" })], 400],
    ["an instance of another pool", [bootstrap("batch-y1"), bootstrap("batch-y2", { pool_id: "another-pool" })], 400],
    ["a name twice", [bootstrap("batch-z1"), bootstrap("batch-z1")], 400],
    ["no instances", [], 400],
    ["more than the largest batch", ["1", "2", "3", "4", "5"].map((n) => bootstrap(`batch-big-${n}`)), 413],
  ])("refuses a batch with %s whole, making nothing", async (_, items, status) => {
    const res = await batch(items);
    expect(res.status).toBe(status);
    expect(res.body.error).toEqual(expect.any(String));
    expect(creates()).toEqual([]);
  });

  it("is read by the coordinator's client", async () => {
    const client = createShimClient(
      { name: "lxd", url: bridge.url, secret: SECRET },
      { controllerId: CONTROLLER, poolId: POOL, extraSpecs: {} },
    );
    expect(await client.batchCreateMax()).toBe(4);
    const answers = await client.createInstances([bootstrap("batch-c1"), bootstrap("batch-c2")] as never);
    expect(answers.ok && answers.value.map((a) => a.ok && a.value.state)).toEqual(["done", "done"]);
  });

  it("has no batch create with batch_create_max 0 (a v1 shim)", async () => {
    const v1 = await startTestBridge(world, { batch_create_max: 0 });
    try {
      expect((await send(v1, "GET", "/v1/capabilities")).body).toMatchObject({ interface_version: "v1" });
      expect((await send(v1, "GET", "/v1/capabilities")).body.batch_create).toBeUndefined();
      expect((await send(v1, "POST", "/v1/instances:batch", JSON.stringify({ instances: [bootstrap("batch-v1")] }))).status).toBe(404);
      expect(creates()).toEqual([]);
    } finally {
      await v1.stop();
    }
  });
});
