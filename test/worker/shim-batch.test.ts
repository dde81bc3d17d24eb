import { env, exports } from "cloudflare:workers";
import { afterEach, beforeEach, describe, expect, inject, it, vi } from "vitest";
import { createShimClient, type ShimPoolContext } from "../../src/providers/shim-client";
import { BootstrapInstance } from "../../src/providers/shim-protocol";
import { createTenant, deliverOutbox, type FakeShimTenant } from "../fake-shim/control";
import { garmBootstrap } from "../fixtures/bootstrap-instance";
import { api, inScaleSetObject, unique } from "./helpers";
import { queueJobs, reconcile, scaleSetWorld } from "./scaleset-world";

// Protocol v1.1 batch create: the client's createInstances against the fake shim, and the scale
// set object using it when the shim offers it (one request for many machines) and not otherwise.

const SECRET = "fake-shim-secret-batch-01";
const TOKEN = "instance-token-must-never-be-logged-batch";
const pool: ShimPoolContext = { controllerId: "ctrl-1", poolId: "pool-b", extraSpecs: {} };

// A successful shim call is a debug line (docs/observability.md): these tests read every level.
let logs: string[];
let savedLevel: string | undefined;
beforeEach(() => {
  logs = [];
  savedLevel = process.env.LOG_LEVEL;
  process.env.LOG_LEVEL = "debug";
  for (const method of ["log", "debug"] as const)
    vi.spyOn(console, method).mockImplementation((line: unknown) => void logs.push(String(line)));
});
afterEach(() => {
  vi.restoreAllMocks();
  if (savedLevel === undefined) delete process.env.LOG_LEVEL;
  else process.env.LOG_LEVEL = savedLevel;
});

const bootstrap = (name = unique("runner")) =>
  BootstrapInstance.parse({ ...garmBootstrap, name, pool_id: pool.poolId, "instance-token": TOKEN });

/** A batch's per-instance answers; the test fails if the request failed whole. */
async function each<T>(whole: Promise<{ ok: true; value: T[] } | { ok: false; error: { message: string } }>): Promise<T[]> {
  const r = await whole;
  if (!r.ok) throw new Error(`the batch failed whole: ${r.error.message}`);
  return r.value;
}

async function batchShim(max = 10): Promise<{ shim: FakeShimTenant; client: ReturnType<typeof createShimClient> }> {
  const shim = await createTenant(inject("fakeShimUrl"), { secret: SECRET, batchCreateMax: max });
  return { shim, client: createShimClient({ name: unique("fake"), url: shim.url, secret: SECRET }, pool) };
}

describe("shim client: batch create", () => {
  it("makes every machine in one signed request and reads one answer per instance, in order", async () => {
    const { shim, client } = await batchShim();
    expect(await client.batchCreateMax()).toBe(10);
    const bs = [bootstrap(), bootstrap(), bootstrap()];
    const answers = await each(client.createInstances(bs));
    expect(answers.map((a) => a.ok && a.value.state === "done" && a.value.instance.name)).toEqual(bs.map((b) => b.name));
    const reqs = (await shim.requests()).filter((r) => r.operation !== "capabilities");
    expect(reqs).toHaveLength(1);
    expect(reqs[0]).toMatchObject({ operation: "create_batch", path: `/t/${shim.id}/v1/instances:batch`, signature_ok: true, status: 200 });
    expect(reqs[0]!.body).toEqual({ instances: bs });
    expect((await shim.machines()).map((m) => m.name).sort()).toEqual(bs.map((b) => b.name).sort());
    // One log line for the batch, with its size and never a token.
    const calls = logs.map((l) => JSON.parse(l)).filter((l) => l.event === "shim_call" && l.operation === "create_instances_batch");
    expect(calls).toMatchObject([{ count: 3, status: 200 }]);
    expect(logs.join("\n")).not.toContain(TOKEN);
  });

  it("is idempotent per name: a repeated batch answers the same machines and makes no second one", async () => {
    const { shim, client } = await batchShim();
    const bs = [bootstrap(), bootstrap()];
    const first = await each(client.createInstances(bs));
    const again = await each(client.createInstances(bs));
    const ids = (r: typeof first) => r.map((a) => a.ok && a.value.state === "done" && a.value.instance.provider_id);
    expect(ids(again)).toEqual(ids(first));
    expect(await shim.machines()).toHaveLength(2);
  });

  it("fails only the items that failed, each read as its single create would be", async () => {
    const { shim, client } = await batchShim();
    await shim.setFaults({
      rules: [
        { operation: "create", times: 1, action: { type: "respond", status: 503, body: { error: "no capacity in zone" } } },
        { operation: "create", times: 1, action: { type: "async", callback: "never" } },
        { operation: "create", times: 1, action: { type: "respond", status: 409, body: { error: "name taken" } } },
      ],
    });
    const bs = [bootstrap(), bootstrap(), bootstrap(), bootstrap()];
    const [a, b, c, d] = await each(client.createInstances(bs));
    expect(a).toMatchObject({
      ok: false,
      error: { kind: "retryable", status: 503, message: expect.stringContaining("no capacity in zone") },
    });
    expect(b).toMatchObject({ ok: true, value: { state: "accepted", operationId: expect.stringMatching(/^op-/) } });
    expect(c).toMatchObject({ ok: false, error: { kind: "duplicate", status: 409 } });
    expect(d).toMatchObject({ ok: true, value: { state: "done", instance: { name: bs[3]!.name } } });
  });

  it("never lets an item's error carry its instance token or the provider secret", async () => {
    const { shim, client } = await batchShim();
    await shim.addRule({
      operation: "create",
      action: { type: "respond", status: 500, body: { error: `cloud echoed ${TOKEN} and ${SECRET}` } },
    });
    const [a] = await each(client.createInstances([bootstrap(), bootstrap()]));
    expect(a).toMatchObject({ ok: false, error: { message: expect.stringContaining("cloud echoed [redacted] and [redacted]") } });
    expect(logs.join("\n")).not.toContain(TOKEN);
  });

  it("reads a failure of the whole request as such", async () => {
    const { shim, client } = await batchShim();
    await shim.addRule({ operation: "create_batch", action: { type: "respond", status: 502, body: { error: "gateway" } } });
    expect(await client.createInstances([bootstrap(), bootstrap()])).toEqual({
      ok: false,
      error: expect.objectContaining({ kind: "retryable", status: 502 }),
    });
  });

  it("reads an instance the answer leaves out, or answers twice, as malformed, and the others as answered", async () => {
    const { shim, client } = await batchShim();
    const bs = [bootstrap(), bootstrap(), bootstrap()];
    const machine = (name: string) => ({ provider_id: `p-${name}`, name, status: "running" });
    await shim.addRule({
      operation: "create_batch",
      action: {
        type: "respond",
        status: 200,
        body: {
          results: [
            { name: bs[0]!.name, status: 201, body: machine(bs[0]!.name) },
            { name: bs[2]!.name, status: 201, body: machine(bs[2]!.name) },
            { name: bs[2]!.name, status: 201, body: machine(bs[2]!.name) },
          ],
        },
      },
    });
    const [a, b, c] = await each(client.createInstances(bs));
    expect(a).toMatchObject({ ok: true, value: { state: "done" } });
    expect(b).toMatchObject({ ok: false, error: { kind: "malformed", message: expect.stringContaining("0 results") } });
    expect(c).toMatchObject({ ok: false, error: { kind: "malformed", message: expect.stringContaining("2 results") } });
  });

  it("finds no batch at a v1 shim", async () => {
    const shim = await createTenant(inject("fakeShimUrl"), { secret: SECRET });
    expect(await createShimClient({ name: unique("fake"), url: shim.url, secret: SECRET }, pool).batchCreateMax()).toBe(0);
  });
});

describe("scale set object: batch create", () => {
  const rows = async (scaleSetId: string) =>
    (
      await env.DB.prepare("SELECT name, status, provider_id FROM instances WHERE scale_set_id = ? AND status != 'deleted' ORDER BY name")
        .bind(scaleSetId)
        .all<{ name: string; status: string; provider_id: string | null }>()
    ).results;

  it("creates a pass's machines in batches of at most the shim's largest when it offers batch create", async () => {
    const w = await scaleSetWorld(SECRET, { max_runners: 20 });
    await w.shim.configure({ batchCreateMax: 4 });
    await queueJobs(w.scaleSetId, 10);
    await reconcile(w.scaleSetId);
    expect((await rows(w.scaleSetId)).map((r) => r.status)).toEqual(Array(10).fill("running"));
    const reqs = await w.shim.requests();
    expect(reqs.filter((r) => r.operation === "create")).toHaveLength(0);
    const batches = reqs.filter((r) => r.operation === "create_batch");
    // ⌈10 / 4⌉ requests of near equal size, every machine in exactly one.
    expect(batches.map((r) => (r.body as { instances: unknown[] }).instances.length).sort()).toEqual([3, 3, 4]);
    expect(new Set(batches.flatMap((r) => (r.body as { instances: { name: string }[] }).instances.map((i) => i.name))).size).toBe(10);
    expect(reqs.filter((r) => r.operation === "capabilities")).toHaveLength(1);
  });

  it("creates one by one at a shim without batch create (protocol v1)", async () => {
    const w = await scaleSetWorld(SECRET);
    await queueJobs(w.scaleSetId, 3);
    await reconcile(w.scaleSetId);
    expect((await rows(w.scaleSetId)).map((r) => r.status)).toEqual(Array(3).fill("running"));
    const reqs = await w.shim.requests();
    expect(reqs.filter((r) => r.operation === "create")).toHaveLength(3);
    expect(reqs.filter((r) => r.operation === "create_batch")).toHaveLength(0);
  });

  it("fails only the items of a batch that failed; async items wait for their callbacks", async () => {
    const w = await scaleSetWorld(SECRET, { max_runners: 20 });
    const provider = (await api.get("/api/v1/providers")).body.find((p: { url: string }) => p.url === w.shim.url);
    await w.shim.configure({ batchCreateMax: 10, callbackUrl: `https://edgerunner.test/api/v1/providers/${provider.name}/callbacks` });
    await w.shim.setFaults({
      rules: [
        { operation: "create", times: 1, action: { type: "respond", status: 500, body: { error: "cloud said no" } } },
        { operation: "create", times: 1, action: { type: "async", complete_after_ms: 1, callback: "outbox" } },
      ],
    });
    await queueJobs(w.scaleSetId, 4);
    const status = await reconcile(w.scaleSetId);
    expect(status.pending_operations).toBe(1);
    const byStatus = (list: { status: string }[]) => list.map((r) => r.status).sort();
    // The failed one went to error (and is replaced); the async one is creating; the other two run.
    const failed = await env.DB.prepare(
      "SELECT i.name FROM instances i WHERE i.scale_set_id = ? AND EXISTS (SELECT 1 FROM json_each(i.transitions) t WHERE json_extract(t.value, '$.to') = 'error')",
    )
      .bind(w.scaleSetId)
      .all<{ name: string }>();
    expect(failed.results).toHaveLength(1);
    const batch = (await w.shim.requests()).find((r) => r.operation === "create_batch")!;
    expect(batch.items!.map((i) => i.status)).toEqual([500, 202, 201, 201]);
    expect(batch.items![0]!.name).toBe(failed.results[0]!.name);
    expect(byStatus(await rows(w.scaleSetId)).filter((s) => s === "creating")).toHaveLength(1);
    expect((await w.shim.requests()).filter((r) => r.operation === "create_batch")).toHaveLength(1);

    let delivered: Awaited<ReturnType<typeof deliverOutbox>> = [];
    for (let i = 0; i < 50 && !delivered.length; i++) {
      await new Promise((r) => setTimeout(r, 20));
      delivered = await deliverOutbox(w.shim, (r) => exports.default.fetch(r));
    }
    expect(delivered.map((d) => d.body)).toEqual([{ accepted: true }]);
    expect(byStatus(await rows(w.scaleSetId))).toContain("running");
    expect(byStatus(await rows(w.scaleSetId)).filter((s) => s === "creating")).toHaveLength(0);
  });
  it("counts a batch request that failed whole as one failed create for the backoff, not one per machine", async () => {
    const w = await scaleSetWorld(SECRET, { max_runners: 20 });
    await w.shim.configure({ batchCreateMax: 10 });
    await w.shim.addRule({ operation: "create_batch", action: { type: "respond", status: 502, body: { error: "gateway" } } });
    await queueJobs(w.scaleSetId, 6);
    const status = await reconcile(w.scaleSetId);
    const failed = await env.DB.prepare(
      "SELECT COUNT(*) AS n FROM instances i WHERE i.scale_set_id = ? AND EXISTS (SELECT 1 FROM json_each(i.transitions) t WHERE json_extract(t.value, '$.to') = 'error')",
    )
      .bind(w.scaleSetId)
      .first<{ n: number }>();
    // Every machine of the batch failed (each is replaced), but the backoff counts one failed call, not six.
    expect(failed!.n).toBe(6);
    expect(status.create_backoff).toMatchObject({ failures: 1, hard_limited_at: null });
  });
  it("uses the same number of D1 round trips with batches as one by one, for 5 and 60 new runners", async () => {
    const trips: number[] = [];
    for (const [n, batchCreateMax] of [
      [5, 0],
      [5, 4],
      [60, 7],
    ] as const) {
      const w = await scaleSetWorld(SECRET, { max_runners: 100 });
      await w.shim.configure({ batchCreateMax });
      // A GitHub budget that pays for all 60 at once: its reservation is one of the round trips counted.
      await inScaleSetObject(w.scaleSetId, (obj) => {
        obj.settings.githubBudget = { pointsPerMinute: 100_000, windowMs: 60_000 };
      });
      await queueJobs(w.scaleSetId, n);
      const status = await reconcile(w.scaleSetId);
      expect((await rows(w.scaleSetId)).filter((r) => r.status === "running")).toHaveLength(n);
      trips.push(status.last_reconcile.d1RoundTrips);
    }
    expect(new Set(trips).size).toBe(1);
  });
});
