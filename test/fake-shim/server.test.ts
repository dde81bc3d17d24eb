// The fake shim checks itself in Node: what the worker tests cannot see from workerd
// (callbacks delivered over HTTP, refusals of bad requests, hanging sockets closed on stop).
import { createHmac } from "node:crypto";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { stackProfile } from "../../e2e/profiles";
import { garmBootstrap } from "../fixtures/bootstrap-instance";
import { createTenant, type FakeShimTenant, type FaultRule } from "./control";
import { type FakeShim, startFakeShim } from "./server";

const SECRET = "fake-shim-self-test-secret";
let shim: FakeShim;
let receiver: { url: string; got: { path: string; headers: Record<string, unknown>; body: string }[]; close(): Promise<void> };

beforeAll(async () => {
  shim = await startFakeShim();
  const got: { path: string; headers: Record<string, unknown>; body: string }[] = [];
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", () => {
      got.push({ path: req.url ?? "", headers: req.headers, body });
      res.writeHead(200, { "content-type": "application/json" }).end('{"accepted":true}');
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  receiver = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    got,
    close: () => new Promise((r) => server.close(() => r())),
  };
});
afterAll(async () => {
  await shim.stop();
  await receiver.close();
});

function signed(secret: string, method: string, url: string, body = "", ts = Math.floor(Date.now() / 1000)) {
  const path = new URL(url).pathname;
  const sig = "sha256=" + createHmac("sha256", secret).update(`${ts}\n${method}\n${path}\n${body}`).digest("hex");
  return {
    "x-edgerunner-timestamp": String(ts),
    "x-edgerunner-signature": sig,
    "x-edgerunner-controller-id": "ctrl",
    "x-edgerunner-pool-id": "pool-1",
    "x-edgerunner-pool-extra-specs": Buffer.from("{}").toString("base64"),
    ...(body ? { "content-type": "application/json" } : {}),
  };
}

async function send(t: FakeShimTenant, method: string, route: string, body = "", opts: { secret?: string; ts?: number } = {}) {
  const url = t.url + route;
  const res = await fetch(url, { method, headers: signed(opts.secret ?? SECRET, method, url, body, opts.ts), ...(body ? { body } : {}) });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

const create = (t: FakeShimTenant, name: string, over: Record<string, unknown> = {}) =>
  send(t, "POST", "/v1/instances", JSON.stringify({ ...garmBootstrap, name, pool_id: "pool-1", ...over }));

describe("fake shim", () => {
  it("refuses unsigned, wrongly signed and stale requests with 401", async () => {
    const t = await createTenant(shim.url, { secret: SECRET });
    expect((await fetch(`${t.url}/v1/instances`)).status).toBe(401);
    expect((await send(t, "GET", "/v1/instances", "", { secret: "other" })).status).toBe(401);
    expect((await send(t, "GET", "/v1/instances", "", { ts: Math.floor(Date.now() / 1000) - 301 })).status).toBe(401);
    expect((await send(t, "GET", "/v1/instances")).status).toBe(200);
    expect((await t.requests()).map((r) => r.signature_ok)).toEqual([false, false, false, true]);
  });

  it("refuses a create whose body is not a GARM BootstrapInstance, or names another pool", async () => {
    const t = await createTenant(shim.url, { secret: SECRET });
    const bad = await create(t, "r-1", { callback_url: "x", "callback-url": undefined });
    expect(bad.status).toBe(400);
    expect((await create(t, "r-1", { pool_id: "pool-2" })).status).toBe(400);
    expect(await t.machines()).toEqual([]);
  });

  it("creates idempotently on the name and answers 409 for a name another pool holds", async () => {
    const t = await createTenant(shim.url, { secret: SECRET });
    const first = await create(t, "r-1");
    const again = await create(t, "r-1");
    expect([first.status, again.status]).toEqual([201, 200]);
    expect(again.body).toEqual(first.body);
    await t.seedMachine({ pool_id: "pool-2", name: "r-2" });
    expect((await create(t, "r-2")).status).toBe(409);
  });

  it("delivers a signed callback to the configured URL after an async create", async () => {
    const t = await createTenant(shim.url, { secret: SECRET, callbackUrl: `${receiver.url}/api/v1/providers/fake/callbacks` });
    await t.addRule({ operation: "create", action: { type: "async", complete_after_ms: 20, callback: "deliver" } });
    const accepted = await create(t, "r-async");
    expect(accepted.status).toBe(202);
    await vi.waitFor(() => expect(receiver.got.length).toBe(1), { timeout: 3000 });
    const [cb] = receiver.got;
    expect(cb!.path).toBe("/api/v1/providers/fake/callbacks");
    const ts = String(cb!.headers["x-edgerunner-timestamp"]);
    const expected = "sha256=" + createHmac("sha256", SECRET).update(`${ts}\nPOST\n${cb!.path}\n${cb!.body}`).digest("hex");
    expect(cb!.headers["x-edgerunner-signature"]).toBe(expected);
    expect(JSON.parse(cb!.body)).toMatchObject({
      operation_id: accepted.body.operation_id,
      instance_name: "r-async",
      error: null,
      result: { name: "r-async" },
    });
    expect((await t.callbacks())[0]).toMatchObject({ state: "delivered", response_status: 200 });
  });

  it("holds a create for the production profile's latency: recorded on arrival, answered (and the machine made) only after it", async () => {
    const t = await createTenant(shim.url, { secret: SECRET });
    await t.setFaults(stackProfile("production", "sync").shimFaults!);
    const answered = create(t, "r-slow");
    await vi.waitFor(async () => expect(await t.requests()).toHaveLength(1));
    expect((await t.requests())[0]).toMatchObject({ operation: "create", status: null });
    expect(await t.machines()).toEqual([]);
    expect((await answered).status).toBe(201);
    expect((await t.requests())[0]).toMatchObject({ status: 201 });
    expect((await t.machines()).map((m) => m.name)).toEqual(["r-slow"]);
  });

  it("answers every create 202 at once in the production profile's async variant, and calls back with the machine", async () => {
    const t = await createTenant(shim.url, { secret: SECRET, callbackUrl: `${receiver.url}/api/v1/providers/async/callbacks` });
    const faults = stackProfile("production", "async").shimFaults!;
    // The profile's delay is a second; the knob is the same with a shorter one.
    await t.setFaults({
      rules: faults.rules!.map((r) => ({ ...r, action: { ...r.action, complete_after_ms: 20 } as FaultRule["action"] })),
    });
    const before = receiver.got.length;
    const [a, b] = await Promise.all([create(t, "r-a1"), create(t, "r-a2")]);
    expect([a.status, b.status]).toEqual([202, 202]);
    await vi.waitFor(() => expect(receiver.got.length).toBe(before + 2), { timeout: 3000 });
    const results = receiver.got
      .slice(before)
      .map((cb) => JSON.parse(cb.body).result.name)
      .sort();
    expect(results).toEqual(["r-a1", "r-a2"]);
    expect((await t.machines()).map((m) => m.name).sort()).toEqual(["r-a1", "r-a2"]);
  });

  it("reports an async failure in the callback and creates nothing", async () => {
    const t = await createTenant(shim.url, { secret: SECRET });
    await t.addRule({
      operation: "create",
      action: { type: "async", callback: "outbox", fail: { message: "no capacity", retryable: true } },
    });
    expect((await create(t, "r-fail")).status).toBe(202);
    await vi.waitFor(async () => expect(await t.callbacks()).toHaveLength(1));
    expect(JSON.parse((await t.callbacks())[0]!.body)).toMatchObject({ result: null, error: { message: "no capacity", retryable: true } });
    expect(await t.machines()).toEqual([]);
  });

  it("hands outbox callbacks to the test once, and takes a new secret", async () => {
    const t = await createTenant(shim.url, { secret: SECRET, callbackUrl: "https://coordinator.test/api/v1/providers/p/callbacks" });
    await t.addRule({ operation: "create", action: { type: "async", callback: "outbox" } });
    expect((await create(t, "r-out")).status).toBe(202);
    await vi.waitFor(async () => expect(await t.callbacks()).toHaveLength(1));
    const taken = await t.takeOutbox();
    expect(taken.map((c) => [c.instance_name, c.path, c.state])).toEqual([["r-out", "/api/v1/providers/p/callbacks", "taken"]]);
    expect(await t.takeOutbox()).toEqual([]);
    await t.configure({ secret: "the-rotated-secret-1" });
    expect((await send(t, "GET", "/v1/instances")).status).toBe(401);
    expect((await send(t, "GET", "/v1/instances", "", { secret: "the-rotated-secret-1" })).status).toBe(200);
  });

  it("never calls back when told so, but the machine still appears for polling", async () => {
    const t = await createTenant(shim.url, { secret: SECRET });
    await t.addRule({ operation: "create", action: { type: "async", complete_after_ms: 10, callback: "never" } });
    expect((await create(t, "r-silent")).status).toBe(202);
    await vi.waitFor(async () => expect((await send(t, "GET", "/v1/instances/r-silent")).status).toBe(200));
    expect(await t.callbacks()).toEqual([]);
  });

  it("answers 404 on delete when told to, and forgets everything on reset", async () => {
    const t = await createTenant(shim.url, { secret: SECRET });
    const m = await t.seedMachine({ pool_id: "pool-1", name: "r-1" });
    await t.addRule({ operation: "delete", action: { type: "respond", status: 404, body: { error: "gone" } } });
    expect((await send(t, "DELETE", `/v1/instances/${m.provider_id}`)).status).toBe(404);
    expect(await t.machines()).toHaveLength(1);
    await t.reset();
    expect(await t.machines()).toEqual([]);
    expect(await t.requests()).toEqual([]);
  });

  it("closes hanging requests when it stops", async () => {
    const own = await startFakeShim();
    const t = await createTenant(own.url, { secret: SECRET });
    await t.addRule({ operation: "list", action: { type: "hang" } });
    const pending = send(t, "GET", "/v1/instances").then(
      () => "answered",
      () => "closed",
    );
    await vi.waitFor(async () => expect(await t.requests()).toHaveLength(1));
    await own.stop();
    expect(await pending).toBe("closed");
  });
});
