import { afterEach, beforeEach, describe, expect, inject, it, vi } from "vitest";
import { createShimClient, MAX_SHIM_RESPONSE_BYTES, type ShimPoolContext } from "../../src/providers/shim-client";
import { BootstrapInstance } from "../../src/providers/shim-protocol";
import { verifySignature } from "../../src/providers/shim-signing";
import { createTenant, type FakeShimTenant } from "../fake-shim/control";
import { garmBootstrap } from "../fixtures/bootstrap-instance";
import { unique } from "./helpers";

const SECRET = "fake-shim-secret-0001";
const TOKEN = "instance-token-must-never-be-logged";
const pool: ShimPoolContext = { controllerId: "ctrl-1", poolId: "pool-a", extraSpecs: { disk_gb: 40, zone: "fra1" } };

let shim: FakeShimTenant;
let logs: string[];
/** The lines written at info (console.log): a successful call is debug (docs/observability.md). */
let infoLogs: string[];
let savedLevel: string | undefined;

beforeEach(async () => {
  shim = await createTenant(inject("fakeShimUrl"), {
    secret: SECRET,
    callbackUrl: "https://edgerunner.test/api/v1/providers/fake/callbacks",
  });
  logs = [];
  infoLogs = [];
  savedLevel = process.env.LOG_LEVEL;
  process.env.LOG_LEVEL = "debug";
  vi.spyOn(console, "log").mockImplementation((line: unknown) => {
    logs.push(String(line));
    infoLogs.push(String(line));
  });
  vi.spyOn(console, "debug").mockImplementation((line: unknown) => void logs.push(String(line)));
});
afterEach(() => {
  vi.restoreAllMocks();
  if (savedLevel === undefined) delete process.env.LOG_LEVEL;
  else process.env.LOG_LEVEL = savedLevel;
});

const client = (opts: Parameters<typeof createShimClient>[2] = {}, target: Partial<{ url: string; secret: string }> = {}) =>
  createShimClient({ name: "fake", url: shim.url, secret: SECRET, ...target }, pool, opts);

const bootstrap = (name = unique("runner"), poolId = pool.poolId) =>
  BootstrapInstance.parse({ ...garmBootstrap, name, pool_id: poolId, "instance-token": TOKEN });

const shimCalls = () => logs.map((l) => JSON.parse(l)).filter((l) => l.event === "shim_call");

describe("shim client against the fake shim", () => {
  it("creates an instance, sending GARM's BootstrapInstance signed, with the controller, pool and extra specs", async () => {
    const b = bootstrap();
    const res = await client().createInstance(b);
    expect(res).toEqual({
      ok: true,
      value: {
        state: "done",
        instance: expect.objectContaining({ name: b.name, provider_id: expect.stringMatching(/^fake-/), status: "running" }),
      },
    });
    const [req] = await shim.requests();
    expect(req).toMatchObject({
      operation: "create",
      method: "POST",
      path: `/t/${shim.id}/v1/instances`,
      signature_ok: true,
      controller_id: "ctrl-1",
      pool_id: "pool-a",
      extra_specs: { disk_gb: 40, zone: "fra1" },
      status: 201,
    });
    expect(req!.body).toEqual(b);
  });

  it("is idempotent on the name: a retried create returns the same machine, never a second one", async () => {
    const b = bootstrap();
    const first = await client().createInstance(b);
    const again = await client().createInstance(b);
    expect(again).toEqual(first);
    expect((await shim.machines()).filter((m) => m.name === b.name)).toHaveLength(1);
  });

  it("gets an instance by provider id or by name; an unknown one is not_found", async () => {
    const b = bootstrap();
    const created = await client().createInstance(b);
    const instance = created.ok && created.value.state === "done" ? created.value.instance : null;
    expect(await client().getInstance(instance!.provider_id)).toEqual({ ok: true, value: instance });
    expect(await client().getInstance(b.name)).toEqual({ ok: true, value: instance });
    expect(await client().getInstance("nope")).toEqual({
      ok: false,
      error: { kind: "not_found", message: expect.stringContaining("404"), status: 404 },
    });
  });

  it("encodes ids in the path and signs the encoded path", async () => {
    await shim.seedMachine({ pool_id: pool.poolId, name: "odd name/with?chars", provider_id: "id with spaces/and#hash" });
    const got = await client().getInstance("id with spaces/and#hash");
    expect(got.ok && got.value.name).toBe("odd name/with?chars");
    const [req] = await shim.requests();
    expect(req!.path).toBe(`/t/${shim.id}/v1/instances/id%20with%20spaces%2Fand%23hash`);
    expect(req!.signature_ok).toBe(true);
  });

  it("lists only the pool's instances", async () => {
    const mine = await shim.seedMachine({ pool_id: pool.poolId, name: unique("orphan") });
    await shim.seedMachine({ pool_id: "another-pool", name: unique("theirs") });
    const res = await client().listInstances();
    expect(res.ok && res.value.map((i) => i.provider_id)).toEqual([mine.provider_id]);
  });

  it("deletes an instance; deleting it again (404) is success", async () => {
    const m = await shim.seedMachine({ pool_id: pool.poolId, name: unique("r") });
    expect(await client().deleteInstance(m.provider_id)).toEqual({ ok: true, value: { state: "done" } });
    expect(await shim.machines()).toEqual([]);
    expect(await client().deleteInstance(m.provider_id)).toEqual({ ok: true, value: { state: "done" } });
    expect((await shim.requests()).map((r) => r.status)).toEqual([204, 404]);
  });

  it("does not touch another pool's instance of the same id", async () => {
    const theirs = await shim.seedMachine({ pool_id: "another-pool", name: unique("r") });
    expect(await client().deleteInstance(theirs.provider_id)).toEqual({ ok: true, value: { state: "done" } });
    expect(await shim.machines()).toHaveLength(1);
  });

  it("stops and starts an instance; an unknown one is not_found", async () => {
    const m = await shim.seedMachine({ pool_id: pool.poolId, name: unique("r") });
    expect(await client().stopInstance(m.provider_id)).toEqual({ ok: true, value: undefined });
    expect((await shim.machines())[0]!.status).toBe("stopped");
    expect(await client().startInstance(m.name)).toEqual({ ok: true, value: undefined });
    expect((await shim.machines())[0]!.status).toBe("running");
    const missing = await client().startInstance("nope");
    expect(!missing.ok && missing.error.kind).toBe("not_found");
  });

  it("removes all instances of the pool and only those", async () => {
    await shim.seedMachine({ pool_id: pool.poolId, name: unique("a") });
    await shim.seedMachine({ pool_id: pool.poolId, name: unique("b") });
    const other = await shim.seedMachine({ pool_id: "another-pool", name: unique("c") });
    expect(await client().removeAllInstances()).toEqual({ ok: true, value: undefined });
    expect((await shim.machines()).map((m) => m.provider_id)).toEqual([other.provider_id]);
  });

  it("reads the shim's capabilities", async () => {
    expect(await client().capabilities()).toEqual({ ok: true, value: { interface_version: "v1", async: true, idempotent_create: true } });
  });

  it("works with a provider URL that has a trailing slash", async () => {
    const res = await client({}, { url: `${shim.url}/` }).listInstances();
    expect(res.ok).toBe(true);
    expect((await shim.requests())[0]!.path).toBe(`/t/${shim.id}/v1/instances`);
  });
});

describe("shim client error classes", () => {
  it.each([
    [500, "retryable"],
    [503, "retryable"],
    [429, "retryable"],
    [400, "permanent"],
    [403, "permanent"],
    [409, "duplicate"],
  ] as const)("a create answered %i is %s, with the shim's message", async (status, kind) => {
    await shim.addRule({ operation: "create", action: { type: "respond", status, body: { error: "cloud says no" } } });
    const res = await client().createInstance(bootstrap());
    expect(res).toEqual({ ok: false, error: { kind, status, message: `create_instance: shim answered ${status}: cloud says no` } });
    expect(await shim.machines()).toEqual([]);
  });

  it("fails only the next N calls", async () => {
    await shim.addRule({ operation: "delete", times: 2, action: { type: "respond", status: 500, body: "boom" } });
    const m = await shim.seedMachine({ pool_id: pool.poolId, name: unique("r") });
    const kinds = [];
    for (let i = 0; i < 3; i++) {
      const r = await client().deleteInstance(m.provider_id);
      kinds.push(r.ok ? "ok" : r.error.kind);
    }
    expect(kinds).toEqual(["retryable", "retryable", "ok"]);
  });

  it("gets a real 409 when the name belongs to another pool's machine", async () => {
    const b = bootstrap();
    await shim.seedMachine({ pool_id: "another-pool", name: b.name });
    const res = await client().createInstance(b);
    expect(!res.ok && res.error).toMatchObject({ kind: "duplicate", status: 409 });
  });

  it("calls a refused signature (wrong secret) permanent", async () => {
    const res = await client({}, { secret: "not-the-shim-secret" }).listInstances();
    expect(!res.ok && res.error).toMatchObject({ kind: "permanent", status: 401 });
    expect((await shim.requests())[0]!.signature_ok).toBe(false);
  });

  it.each([
    ["a body that is not JSON", "<html>502 Bad Gateway</html>", /not JSON/],
    [
      "a status outside GARM's set",
      { provider_id: "p-1", name: "NAME", status: "booting" },
      /status must be one of running, error, stopped, unknown/,
    ],
    ["an empty provider_id", { provider_id: "", name: "NAME", status: "running" }, /provider_id must be a non-empty string/],
    ["another instance's name", { provider_id: "p-1", name: "someone-else", status: "running" }, /not 'NAME'/],
  ])("calls a create answered 200 with %s malformed", async (_, body, message) => {
    const b = bootstrap();
    const withName = typeof body === "string" ? body : { ...body, name: body.name === "NAME" ? b.name : body.name };
    await shim.addRule({ operation: "create", action: { type: "respond", status: 200, body: withName } });
    const res = await client().createInstance(b);
    expect(!res.ok && res.error.kind).toBe("malformed");
    expect(!res.ok && res.error.message.replace(b.name, "NAME")).toMatch(message);
  });

  it("calls a 202 without an operation_id, and a 204 to a create, malformed", async () => {
    await shim.addRule({ operation: "create", action: { type: "respond", status: 202, body: { id: "x" } } });
    await shim.addRule({ operation: "create", action: { type: "respond", status: 204 } });
    for (const expected of [/202 without an operation_id/, /unexpected status 204/]) {
      const res = await client().createInstance(bootstrap());
      expect(!res.ok && res.error).toMatchObject({ kind: "malformed", message: expect.stringMatching(expected) });
    }
  });

  it("calls garbage answers to get and list malformed, and a list spoiled by one bad entry", async () => {
    await shim.seedMachine({ pool_id: pool.poolId, name: unique("r") });
    await shim.addRule({ operation: "get", action: { type: "respond", status: 200, body: "{not json" } });
    await shim.addRule({ operation: "list", action: { type: "respond", status: 200, body: { instances: [] } } });
    await shim.addRule({
      operation: "list",
      action: { type: "respond", status: 200, body: [{ provider_id: "a", name: "b", status: "running" }, { name: "c" }] },
    });
    expect((await client().getInstance("x")) as any).toMatchObject({ ok: false, error: { kind: "malformed" } });
    expect((await client().listInstances()) as any).toMatchObject({ ok: false, error: { kind: "malformed" } });
    const spoiled = await client().listInstances();
    expect(!spoiled.ok && spoiled.error.message).toMatch(/1\.provider_id/);
  });

  it("gives up after timeoutMs on a shim that never answers: retryable", async () => {
    await shim.addRule({ operation: "get", action: { type: "hang" } });
    const res = await client({ timeoutMs: 300 }).getInstance("x");
    expect(res).toEqual({ ok: false, error: { kind: "retryable", message: "get_instance: no answer within 300 ms" } });
  });

  it("times out on a slow shim too", async () => {
    await shim.setFaults({ latency_ms: { list: 1_000 } });
    const res = await client({ timeoutMs: 200 }).listInstances();
    expect(!res.ok && res.error.kind).toBe("retryable");
    await shim.setFaults({ latency_ms: { list: 50 } });
    expect((await client({ timeoutMs: 2_000 }).listInstances()).ok).toBe(true);
  });

  it("calls a redirect permanent and does not follow it", async () => {
    await shim.addRule({ operation: "list", action: { type: "respond", status: 302, body: "" } });
    const res = await client().listInstances();
    expect(!res.ok && res.error).toMatchObject({ kind: "permanent", status: 302 });
    expect(await shim.requests()).toHaveLength(1);
  });

  it("does not follow a redirect to another host: the signed create goes nowhere else, and the error says where it pointed", async () => {
    // The same fake server under another host name: a create sent on would be recorded there.
    const elsewhere = await createTenant(inject("fakeShimUrl"), { secret: SECRET });
    const elsewhereUrl = elsewhere.url.replace("127.0.0.1", "localhost");
    const location = `${elsewhereUrl}/v1/instances`;
    await shim.addRule({ operation: "create", action: { type: "respond", status: 307, headers: { location } } });
    const res = await client().createInstance(bootstrap());
    expect(!res.ok && res.error).toEqual({
      kind: "permanent",
      status: 307,
      message: `create_instance: shim answered 307: a redirect to ${new URL(location).origin}, not followed (requests go only to the provider's URL)`,
    });
    expect(await shim.requests()).toHaveLength(1);
    expect(await elsewhere.requests()).toEqual([]);
    // That host answers: a followed redirect would have reached it.
    expect((await client({}, { url: elsewhereUrl }).listInstances()).ok).toBe(true);
    expect(await elsewhere.requests()).toHaveLength(1);
  });

  it("refuses to buffer an oversized answer: malformed", async () => {
    await shim.addRule({ operation: "list", action: { type: "flood", status: 200, bytes: MAX_SHIM_RESPONSE_BYTES + 1024 } });
    const res = await client().listInstances();
    expect(!res.ok && res.error).toMatchObject({ kind: "malformed", message: expect.stringMatching(/larger than/) });
  });

  it("calls a provider URL that does not parse permanent", async () => {
    const res = await createShimClient({ name: "bad", url: "not a url", secret: SECRET }, pool).listInstances();
    expect(!res.ok && res.error.kind).toBe("permanent");
    expect(shimCalls()).toEqual([expect.objectContaining({ operation: "list_instances", status: null, error_kind: "permanent" })]);
  });

  it("calls a refused connection retryable", async () => {
    const res = await createShimClient({ name: "down", url: "http://127.0.0.1:1", secret: SECRET }, pool).listInstances();
    expect(!res.ok && res.error).toMatchObject({ kind: "retryable", message: expect.stringMatching(/^list_instances: connection failed/) });
  });

  it("recovers the same machine when a create's answer was lost (timeout) and the create is retried", async () => {
    const b = bootstrap();
    await shim.addRule({ operation: "create", action: { type: "hang", apply: true } });
    const lost = await client({ timeoutMs: 300 }).createInstance(b);
    expect(!lost.ok && lost.error.kind).toBe("retryable");
    const retried = await client().createInstance(b);
    expect(retried.ok && retried.value.state === "done" && retried.value.instance.name).toBe(b.name);
    expect(await shim.machines()).toHaveLength(1);
  });
});

describe("shim client async operations", () => {
  it("returns accepted for a 202 create; the machine appears later and the callback is signed for the coordinator", async () => {
    const b = bootstrap();
    await shim.addRule({ operation: "create", action: { type: "async", complete_after_ms: 100, callback: "outbox" } });
    const res = await client().createInstance(b);
    expect(res).toEqual({ ok: true, value: { state: "accepted", operationId: expect.stringMatching(/^op-/) } });
    const operationId = res.ok && res.value.state === "accepted" ? res.value.operationId : "";
    expect((await client().getInstance(b.name)) as any).toMatchObject({ ok: false, error: { kind: "not_found" } });
    await vi.waitFor(async () => expect(await shim.callbacks()).toHaveLength(1), { timeout: 3_000 });
    const [cb] = await shim.callbacks();
    expect(JSON.parse(cb!.body)).toEqual({
      operation_id: operationId,
      instance_name: b.name,
      result: expect.objectContaining({ name: b.name, status: "running" }),
      error: null,
    });
    expect(cb!.path).toBe("/api/v1/providers/fake/callbacks");
    const check = await verifySignature(
      SECRET,
      { method: "POST", pathWithQuery: cb!.path, body: cb!.body },
      { timestamp: cb!.headers["x-edgerunner-timestamp"], signature: cb!.headers["x-edgerunner-signature"] },
    );
    expect(check).toEqual({ ok: true });
    expect((await client().getInstance(b.name)).ok).toBe(true);
  });

  it("returns accepted for a 202 delete", async () => {
    const m = await shim.seedMachine({ pool_id: pool.poolId, name: unique("r") });
    await shim.addRule({ operation: "delete", action: { type: "async", complete_after_ms: 0, callback: "never" } });
    expect(await client().deleteInstance(m.provider_id)).toEqual({
      ok: true,
      value: { state: "accepted", operationId: expect.any(String) },
    });
    await vi.waitFor(async () => expect(await shim.machines()).toEqual([]), { timeout: 3_000 });
  });
});

describe("shim client logging", () => {
  it("logs one shim_call line per call, without the secret or the instance token", async () => {
    const b = bootstrap();
    await shim.addRule({ operation: "create", action: { type: "respond", status: 500, body: { error: `rejected token ${TOKEN}` } } });
    const failed = await client().createInstance(b);
    await client().createInstance(b);
    await client().getInstance(b.name);
    expect(!failed.ok && failed.error.message).toBe("create_instance: shim answered 500: rejected token [redacted]");
    const calls = shimCalls();
    expect(calls).toEqual([
      {
        event: "shim_call",
        provider: "fake",
        scale_set: "pool-a",
        operation: "create_instance",
        instance: b.name,
        status: 500,
        duration_ms: expect.any(Number),
        error_kind: "retryable",
        error: "create_instance: shim answered 500: rejected token [redacted]",
      },
      expect.objectContaining({ operation: "create_instance", status: 201 }),
      expect.objectContaining({ operation: "get_instance", status: 200 }),
    ]);
    expect(calls[1]).not.toHaveProperty("error");
    // At info only the failure: the successful calls are debug.
    expect(infoLogs.map((l) => JSON.parse(l)).filter((l) => l.event === "shim_call")).toEqual([calls[0]]);
    for (const line of logs) {
      expect(line).not.toContain(TOKEN);
      expect(line).not.toContain(SECRET);
    }
  });

  it("redacts the provider secret from anything a shim echoes back", async () => {
    await shim.addRule({ operation: "get", action: { type: "respond", status: 400, body: { error: `you sent secret ${SECRET}?` } } });
    const res = await client().getInstance("x");
    expect(!res.ok && res.error.message).toBe("get_instance: shim answered 400: you sent secret [redacted]?");
    for (const line of logs) expect(line).not.toContain(SECRET);
  });

  it("logs transport failures with a null status", async () => {
    await shim.addRule({ operation: "list", action: { type: "hang" } });
    await client({ timeoutMs: 100 }).listInstances();
    expect(shimCalls()).toEqual([expect.objectContaining({ operation: "list_instances", status: null, error_kind: "retryable" })]);
  });
});
