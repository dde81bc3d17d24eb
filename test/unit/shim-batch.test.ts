import { describe, expect, it } from "vitest";
import { MAX_BATCH_CREATE, rememberedBatchMax } from "../../src/providers/shim-capability-memo";
import { BatchCreateResponse, ShimCapabilities, validateBatchCreate } from "../../src/providers/shim-protocol";
import { matchShimRoute } from "../../src/providers/shim-routes";
import { evenBatches } from "../../src/scaleset/executor/create-dispatch";
import { garmBootstrap } from "../fixtures/bootstrap-instance";

const POOL = garmBootstrap.pool_id;
const item = (name: string, over: Record<string, unknown> = {}) => ({ ...garmBootstrap, name, ...over });

describe("protocol v1.1 batch create: the wire", () => {
  it("routes POST /v1/instances:batch, and only POST", () => {
    expect(matchShimRoute("POST", "/v1/instances:batch")).toEqual({ op: "create_batch" });
    expect(matchShimRoute("GET", "/v1/instances:batch")).toBe("method_not_allowed");
    // An instance id with a colon is percent-encoded, so it never looks like the batch route.
    expect(matchShimRoute("GET", `/v1/instances/${encodeURIComponent("a:batch")}`)).toEqual({ op: "get", id: "a:batch" });
  });

  it("reads batch_create from capabilities; a v1 shim's capabilities have none", () => {
    expect(ShimCapabilities.parse({ interface_version: "v1", async: true }).batch_create).toBeUndefined();
    expect(ShimCapabilities.parse({ interface_version: "v1.1", async: false, batch_create: { max: 50 } }).batch_create).toEqual({
      max: 50,
    });
    expect(ShimCapabilities.safeParse({ interface_version: "v1.1", async: false, batch_create: { max: 0 } }).success).toBe(false);
  });

  it("takes a batch of valid instances of the request's pool", () => {
    const v = validateBatchCreate({ instances: [item("a"), item("b")] }, POOL, 10);
    expect(v.ok && v.value.map((b) => b.name)).toEqual(["a", "b"]);
  });

  it.each([
    ["not an object", [item("a")], /expected object/],
    ["no instances", { instances: [] }, /instances/],
    ["an invalid item", { instances: [item("a"), item("b", { arch: "x86_64" })] }, /instances\.1\.arch/],
    ["an item of another pool", { instances: [item("a"), item("b", { pool_id: "other" })] }, /instances\.1\.pool_id/],
    ["a name twice", { instances: [item("a"), item("a")] }, /instances\.1\.name: a appears twice/],
  ])("refuses a batch with %s, whole", (_, body, problem) => {
    const v = validateBatchCreate(body, POOL, 10);
    expect(v.ok).toBe(false);
    expect(!v.ok && v.tooLarge).toBe(false);
    expect(!v.ok && v.problems.join("\n")).toMatch(problem);
  });

  it("refuses more than the largest batch as too large", () => {
    const v = validateBatchCreate({ instances: [item("a"), item("b"), item("c")] }, POOL, 2);
    expect(v).toEqual({ ok: false, tooLarge: true, problems: ["instances: 3 is more than the largest batch, 2"] });
  });

  it("answers one {name, status, body} per instance", () => {
    expect(BatchCreateResponse.safeParse({ results: [{ name: "a", status: 201, body: { provider_id: "x" } }] }).success).toBe(true);
    expect(BatchCreateResponse.safeParse({ results: [{ name: "a", status: 2001 }] }).success).toBe(false);
    expect(BatchCreateResponse.safeParse([{ name: "a", status: 201 }]).success).toBe(false);
  });
});

describe("the object's batches", () => {
  it("splits creates into ⌈n / max⌉ batches of near equal size", () => {
    const sizes = (n: number, max: number) =>
      evenBatches(
        Array.from({ length: n }, (_, i) => i),
        max,
      ).map((b) => b.length);
    expect(sizes(1000, 100)).toEqual(Array(10).fill(100));
    expect(sizes(150, 100)).toEqual([75, 75]);
    expect(sizes(7, 3)).toEqual([3, 2, 2]);
    expect(sizes(10, 4)).toEqual([4, 3, 3]);
    expect(sizes(0, 100)).toEqual([]);
    expect(evenBatches([1, 2, 3], 100).flat()).toEqual([1, 2, 3]);
  });

  it("asks a shim's capabilities once, caps its max at the coordinator's, and asks again soon after a failure", async () => {
    let asked = 0;
    const key = `unit-${Math.random()}`;
    const big = async () => {
      asked++;
      return { known: true, max: 5000 };
    };
    expect(await rememberedBatchMax(key, big, 1_000)).toBe(MAX_BATCH_CREATE);
    expect(await rememberedBatchMax(key, big, 2_000)).toBe(MAX_BATCH_CREATE);
    expect(asked).toBe(1);

    const failing = `unit-fail-${Math.random()}`;
    const down = async () => {
      asked++;
      return { known: false, max: 0 };
    };
    expect(await rememberedBatchMax(failing, down, 1_000)).toBe(0);
    expect(await rememberedBatchMax(failing, down, 1_000 + 29_000)).toBe(0);
    expect(asked).toBe(2);
    expect(await rememberedBatchMax(failing, big, 1_000 + 31_000)).toBe(MAX_BATCH_CREATE);
    expect(await rememberedBatchMax(`unit-throw-${Math.random()}`, () => Promise.reject(new Error("x")), 1)).toBe(0);
  });
});
