import { env, exports } from "cloudflare:workers";
import { describe, expect, inject, it, vi } from "vitest";
import { createShimClient } from "../../src/providers/shim-client";
import { BootstrapInstance, type ShimCallback } from "../../src/providers/shim-protocol";
import { signRequest } from "../../src/providers/shim-signing";
import { MAX_CALLBACK_BYTES } from "../../src/routes/provider-callbacks";
import { createTenant, deliverOutbox } from "../fake-shim/control";
import { garmBootstrap } from "../fixtures/bootstrap-instance";
import {
  api,
  call,
  dumpDb,
  expectRejectedWithoutWrites,
  inScaleSetObject,
  insertInstance,
  seed,
  unique,
  withoutRequestId,
} from "./helpers";

const SECRET = "callback-test-secret-0001";

async function setup(secret = SECRET) {
  const repo = await seed.repository();
  const provider = await seed.provider({ secret });
  const scaleSet = await seed.scaleSet(`repositories/${repo.id}`, { provider_name: provider.name });
  const instance = await insertInstance(scaleSet.id, { status: "creating", runner_status: "pending" });
  await awaitOperation(scaleSet.id, instance.name, `op-${instance.name}`);
  return { provider, scaleSet, instance };
}

/** Puts the scale set's object in the state it is in after a shim answered 202 for the instance. */
async function awaitOperation(scaleSetId: string, instanceName: string, operationId: string, kind: "create" | "delete" = "create") {
  await inScaleSetObject(scaleSetId, (obj) => {
    obj.state.bind(scaleSetId);
    obj.state.updateOps(instanceName, { opId: operationId, opKind: kind, pollAt: Date.now() + 3_600_000 });
  });
}

/** The operation the object still waits for on the instance (null once a callback settled it). */
const pendingOperation = (scaleSetId: string, instanceName: string) =>
  inScaleSetObject(scaleSetId, (obj) => obj.state.ops(instanceName)?.opId ?? null);

const instanceState = (id: string) =>
  env.DB.prepare("SELECT status, provider_id, provider_fault FROM instances WHERE id = ?")
    .bind(id)
    .first<{ status: string; provider_id: string | null; provider_fault: string | null }>();

const callbackFor = (instanceName: string, over: Partial<ShimCallback> = {}): ShimCallback => ({
  operation_id: `op-${instanceName}`,
  instance_name: instanceName,
  result: {
    provider_id: "i-0abc",
    name: instanceName,
    status: "running",
    os_type: "linux",
    addresses: [{ address: "10.0.0.9", type: "private" }],
  },
  error: null,
  ...over,
});

interface SendOptions {
  secret?: string;
  nowMs?: number;
  /** Sign this body, send `raw` (or the signed body). */
  raw?: string;
  signedPath?: string;
  headers?: Record<string, string>;
  unsigned?: boolean;
}

async function sendCallback(providerName: string, body: unknown, o: SendOptions = {}) {
  const path = `/api/v1/providers/${providerName}/callbacks`;
  const signed = typeof body === "string" ? body : JSON.stringify(body);
  const sig = o.unsigned
    ? {}
    : await signRequest(o.secret ?? SECRET, { method: "POST", pathWithQuery: o.signedPath ?? path, body: signed }, o.nowMs);
  return call("POST", path, undefined, { token: null, raw: o.raw ?? signed, headers: { ...sig, ...o.headers } });
}

describe("provider callbacks", () => {
  it("hands a correctly signed callback to the scale set that owns the instance, without the admin token", async () => {
    const { provider, scaleSet, instance } = await setup();
    const cb = callbackFor(instance.name);
    const res = await sendCallback(provider.name, cb);
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({ accepted: true });
    expect(await instanceState(instance.id)).toMatchObject({ status: "running", provider_id: "i-0abc" });
    expect(await pendingOperation(scaleSet.id, instance.name)).toBeNull();
  });

  it("answers accepted: false for an operation the object is not waiting for, changing nothing", async () => {
    const { provider, scaleSet, instance } = await setup();
    const before = await dumpDb();
    const res = await sendCallback(provider.name, callbackFor(instance.name, { operation_id: "op-stale" }));
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ accepted: false });
    expect(await dumpDb()).toEqual(before);
    expect(await pendingOperation(scaleSet.id, instance.name)).toBe(`op-${instance.name}`);
  });

  it.each([
    [
      "an error",
      { result: null, error: { message: "quota exceeded in fra1", retryable: true } },
      { status: "error", provider_fault: "quota exceeded in fra1" },
    ],
    [
      "a result GARM's rule rejects (the object records it as a provider fault)",
      { result: { name: "x", status: "booting" } },
      { status: "error", provider_fault: expect.stringMatching(/^malformed result/) },
    ],
  ])("accepts a callback carrying %s", async (_, over, expected) => {
    const { provider, scaleSet, instance } = await setup();
    const cb = callbackFor(instance.name, over as Partial<ShimCallback>);
    expect((await sendCallback(provider.name, cb)).body).toEqual({ accepted: true });
    expect(await instanceState(instance.id)).toMatchObject(expected);
    expect(await pendingOperation(scaleSet.id, instance.name)).toBeNull();
  });

  it("accepts a callback carrying a finished delete (neither result nor error)", async () => {
    const repo = await seed.repository();
    const provider = await seed.provider({ secret: SECRET });
    const scaleSet = await seed.scaleSet(`repositories/${repo.id}`, { provider_name: provider.name });
    const instance = await insertInstance(scaleSet.id, { status: "deleting", runner_status: "terminated" });
    await awaitOperation(scaleSet.id, instance.name, `op-${instance.name}`, "delete");
    expect((await sendCallback(provider.name, callbackFor(instance.name, { result: null, error: null }))).body).toEqual({ accepted: true });
    expect(await instanceState(instance.id)).toMatchObject({ status: "deleted" });
  });

  it("accepts the callback the fake shim signs with its own HMAC implementation after a 202 create", async () => {
    const { provider, scaleSet, instance } = await setup();
    const shim = await createTenant(inject("fakeShimUrl"), {
      secret: SECRET,
      callbackUrl: `https://edgerunner.test/api/v1/providers/${provider.name}/callbacks`,
    });
    await shim.addRule({ operation: "create", action: { type: "async", complete_after_ms: 10, callback: "outbox" } });
    const client = createShimClient(
      { name: provider.name, url: shim.url, secret: SECRET },
      { controllerId: "c", poolId: scaleSet.id, extraSpecs: {} },
    );
    const created = await client.createInstance(BootstrapInstance.parse({ ...garmBootstrap, name: instance.name, pool_id: scaleSet.id }));
    expect(created.ok && created.value.state).toBe("accepted");
    if (created.ok && created.value.state === "accepted") await awaitOperation(scaleSet.id, instance.name, created.value.operationId);
    await vi.waitFor(async () => expect(await shim.callbacks()).toHaveLength(1), { timeout: 3_000 });
    const delivered = await deliverOutbox(shim, (r) => exports.default.fetch(r));
    expect(delivered.map((d) => [d.status, d.body])).toEqual([[200, { accepted: true }]]);
    expect(await deliverOutbox(shim, (r) => exports.default.fetch(r))).toEqual([]);
    expect(await instanceState(instance.id)).toMatchObject({ status: "running" });
    expect(await pendingOperation(scaleSet.id, instance.name)).toBeNull();
  });

  it.each<[string, (p: string, name: string) => Promise<Awaited<ReturnType<typeof call>>>, string]>([
    ["no signature at all", (p, n) => sendCallback(p, callbackFor(n), { unsigned: true }), "missing_timestamp"],
    [
      "the admin token instead of a signature",
      (p, n) => sendCallback(p, callbackFor(n), { unsigned: true, headers: { authorization: "Bearer test-admin-token" } }),
      "missing_timestamp",
    ],
    [
      "a timestamp but no signature",
      (p, n) =>
        sendCallback(p, callbackFor(n), { unsigned: true, headers: { "x-edgerunner-timestamp": String(Math.floor(Date.now() / 1000)) } }),
      "missing_signature",
    ],
    ["the wrong secret", (p, n) => sendCallback(p, callbackFor(n), { secret: "not-the-provider-secret" }), "bad_signature"],
    ["a timestamp 400 s old", (p, n) => sendCallback(p, callbackFor(n), { nowMs: Date.now() - 400_000 }), "stale_timestamp"],
    ["a timestamp 400 s ahead", (p, n) => sendCallback(p, callbackFor(n), { nowMs: Date.now() + 400_000 }), "stale_timestamp"],
    [
      "a body changed after signing",
      (p, n) => sendCallback(p, callbackFor(n), { raw: JSON.stringify(callbackFor(n, { operation_id: "op-tampered" })) }),
      "bad_signature",
    ],
    [
      "a signature made for another provider's path",
      (p, n) => sendCallback(p, callbackFor(n), { signedPath: "/api/v1/providers/other/callbacks" }),
      "bad_signature",
    ],
    [
      "a malformed signature",
      (p, n) => sendCallback(p, callbackFor(n), { headers: { "x-edgerunner-signature": "deadbeef" } }),
      "malformed_signature",
    ],
  ])("rejects %s with 401, changing nothing", async (_, send, reason) => {
    const { provider, scaleSet, instance } = await setup();
    const res = await expectRejectedWithoutWrites(401, () => send(provider.name, instance.name));
    expect(res.body).toMatchObject({ error: "unauthorized", code: "invalid_signature", details: { reason } });
    expect(await pendingOperation(scaleSet.id, instance.name)).toBe(`op-${instance.name}`);
  });

  it("answers an unknown provider exactly like a known one with a bad signature, so names do not leak", async () => {
    const { provider, instance } = await setup();
    const ghost = unique("ghost");
    for (const opts of [{ unsigned: true }, {}, { nowMs: Date.now() - 400_000 }] as SendOptions[]) {
      const known = await sendCallback(provider.name, callbackFor(instance.name), { ...opts, secret: "a-secret-someone-guessed" });
      const unknown = await expectRejectedWithoutWrites(401, () =>
        sendCallback(ghost, callbackFor(instance.name), { ...opts, secret: "a-secret-someone-guessed" }),
      );
      expect(withoutRequestId(unknown.body)).toEqual(withoutRequestId(known.body));
      expect(unknown.status).toBe(known.status);
    }
  });

  it.each([
    ["malformed JSON", '{"operation_id": "op-1",', /malformed JSON/],
    ["a missing operation_id", { instance_name: "NAME", result: null, error: null }, /invalid request body/],
    [
      "both result and error",
      { operation_id: "o", instance_name: "NAME", result: { name: "NAME" }, error: { message: "x", retryable: false } },
      /invalid request body/,
    ],
    [
      "an error without retryable",
      { operation_id: "o", instance_name: "NAME", result: null, error: { message: "x" } },
      /invalid request body/,
    ],
    ["an unknown field", { operation_id: "o", instance_name: "NAME", result: null, error: null, status: "done" }, /invalid request body/],
    ["a JSON array", [], /invalid request body/],
  ])("rejects a signed body with %s with 400, changing nothing", async (_, body, error) => {
    const { provider, scaleSet, instance } = await setup();
    const raw = typeof body === "string" ? body : JSON.stringify(body).replaceAll("NAME", instance.name);
    const res = await expectRejectedWithoutWrites(400, () => sendCallback(provider.name, raw));
    expect(res.body.error).toMatch(error);
    expect(await pendingOperation(scaleSet.id, instance.name)).toBe(`op-${instance.name}`);
  });

  it("refuses a body over 256 KiB with 413 before checking anything else", async () => {
    const { provider, scaleSet, instance } = await setup();
    const huge = callbackFor(instance.name, { result: null, error: { message: "x".repeat(MAX_CALLBACK_BYTES), retryable: false } });
    const res = await expectRejectedWithoutWrites(413, () => sendCallback(provider.name, huge));
    expect(res.body).toMatchObject({ error: "body too large", code: "payload_too_large", details: { max_bytes: MAX_CALLBACK_BYTES } });
    expect(await pendingOperation(scaleSet.id, instance.name)).toBe(`op-${instance.name}`);
  });

  it("refuses a body over 256 KiB sent without Content-Length with 413, reading it to its end so the shim reads the answer", async () => {
    const { provider, scaleSet, instance } = await setup();
    const chunk = new TextEncoder().encode("x".repeat(64 * 1024));
    const total = 8; // 512 KiB offered
    let pulled = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (pulled++ < total) controller.enqueue(chunk);
        else controller.close();
      },
    });
    const res = await expectRejectedWithoutWrites(413, async () => {
      const r = await exports.default.fetch(
        new Request(`https://edgerunner.test/api/v1/providers/${provider.name}/callbacks`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body,
        }),
      );
      const text = await r.text();
      return { status: r.status, body: JSON.parse(text), text, headers: r.headers };
    });
    expect(res.body).toMatchObject({ code: "payload_too_large", details: { max_bytes: MAX_CALLBACK_BYTES } });
    expect(pulled).toBe(total + 1);
    expect(await pendingOperation(scaleSet.id, instance.name)).toBe(`op-${instance.name}`);
  });

  it("rejects a signed body that is not JSON with 415", async () => {
    const { provider, instance } = await setup();
    const raw = `operation_id=o&instance_name=${instance.name}`;
    await expectRejectedWithoutWrites(415, () =>
      sendCallback(provider.name, raw, { headers: { "content-type": "application/x-www-form-urlencoded" } }),
    );
  });

  it("answers 404 for an instance that does not exist, changing nothing", async () => {
    const { provider } = await setup();
    const res = await expectRejectedWithoutWrites(404, () => sendCallback(provider.name, callbackFor("no-such-runner")));
    expect(res.body).toMatchObject({
      error: "instance not found",
      code: "not_found",
      details: { provider: provider.name, instance_name: "no-such-runner" },
    });
  });

  it("answers 404 for another provider's instance, and its scale set hears nothing", async () => {
    const mine = await setup();
    const theirs = await setup("another-provider-secret-02");
    const res = await expectRejectedWithoutWrites(404, () => sendCallback(mine.provider.name, callbackFor(theirs.instance.name)));
    expect(res.body.error).toBe("instance not found");
    expect(await pendingOperation(theirs.scaleSet.id, theirs.instance.name)).toBe(`op-${theirs.instance.name}`);
  });

  it("follows a provider secret rotation, on both sides", async () => {
    const { provider, scaleSet, instance } = await setup();
    const shim = await createTenant(inject("fakeShimUrl"), {
      secret: SECRET,
      callbackUrl: `https://edgerunner.test/api/v1/providers/${provider.name}/callbacks`,
    });
    await shim.addRule({ operation: "create", times: 2, action: { type: "async", callback: "outbox" } });
    const bootstrap = BootstrapInstance.parse({ ...garmBootstrap, name: instance.name, pool_id: scaleSet.id });
    const clientWith = (secret: string) =>
      createShimClient({ name: provider.name, url: shim.url, secret }, { controllerId: "c", poolId: scaleSet.id, extraSpecs: {} });
    expect((await clientWith(SECRET).createInstance(bootstrap)).ok).toBe(true);
    await vi.waitFor(async () => expect(await shim.callbacks()).toHaveLength(1), { timeout: 3_000 });

    expect((await api.put(`/api/v1/providers/${provider.name}`, { secret: "rotated-provider-secret-9" })).status).toBe(200);
    // Signed with the old secret: refused, and the scale set hears nothing.
    expect((await deliverOutbox(shim, (r) => exports.default.fetch(r))).map((d) => d.status)).toEqual([401]);
    expect(await instanceState(instance.id)).toMatchObject({ status: "creating" });

    // The shim learns the new secret; the retried create (same machine) calls back and is heard.
    await shim.configure({ secret: "rotated-provider-secret-9" });
    const retried = await clientWith("rotated-provider-secret-9").createInstance(bootstrap);
    expect(retried.ok && retried.value.state).toBe("accepted");
    if (retried.ok && retried.value.state === "accepted") await awaitOperation(scaleSet.id, instance.name, retried.value.operationId);
    await vi.waitFor(async () => expect(await shim.callbacks()).toHaveLength(2), { timeout: 3_000 });
    expect((await deliverOutbox(shim, (r) => exports.default.fetch(r))).map((d) => d.status)).toEqual([200]);
    expect(await instanceState(instance.id)).toMatchObject({ status: "running" });
    expect(await shim.machines()).toHaveLength(1);
  });

  it("follows a provider secret rotation", async () => {
    const { provider, instance } = await setup();
    expect((await api.put(`/api/v1/providers/${provider.name}`, { secret: "rotated-provider-secret-9" })).status).toBe(200);
    expect((await sendCallback(provider.name, callbackFor(instance.name))).status).toBe(401);
    const cb = callbackFor(instance.name);
    expect((await sendCallback(provider.name, cb, { secret: "rotated-provider-secret-9" })).status).toBe(200);
    expect(await instanceState(instance.id)).toMatchObject({ status: "running" });
  });

  it("is documented in the OpenAPI document with the signature headers and its own security", async () => {
    const doc = (await api.get("/api/v1/openapi.json", { token: null })).body;
    const op = doc.paths["/api/v1/providers/{name}/callbacks"].post;
    expect(op.security).toEqual([{ providerSignature: [] }]);
    expect(
      op.parameters
        .filter((p: any) => p.in === "header")
        .map((p: any) => p.name)
        .sort(),
    ).toEqual(["x-edgerunner-signature", "x-edgerunner-timestamp"]);
    expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(["200", "400", "401", "404"]));
    expect(doc.components.securitySchemes.providerSignature).toMatchObject({ type: "apiKey", in: "header" });
    const ownSecurity = Object.values(doc.paths as Record<string, Record<string, any>>).flatMap((ops) =>
      Object.values(ops).filter((o) => JSON.stringify(o.security ?? []).includes("providerSignature")),
    );
    expect(ownSecurity).toEqual([op]);
  });
});
