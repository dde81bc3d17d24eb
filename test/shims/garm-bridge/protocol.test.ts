// The bridge's answers: GARM exit codes and output mapped onto shim protocol v1 statuses,
// signature checks before anything runs, idempotent creates, and the coordinator's own shim
// client talking to it.
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { createShimClient } from "../../../src/providers/shim-client";
import {
  bootstrap,
  CONTROLLER,
  EXTRA_SPECS,
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
  bridge = await startTestBridge(world, { base_path: "/lxd", previous_secrets: ["the-previous-secret-still-valid"] });
});
afterAll(async () => {
  await bridge.stop();
  world.cleanup();
});
afterEach(() => {
  world.configure({});
  world.clearCalls();
});

const create = (name: string, over: Record<string, unknown> = {}) =>
  send(bridge, "POST", "/v1/instances", JSON.stringify(bootstrap(name, over)));

describe("signatures", () => {
  it("refuses missing, malformed, stale and wrong signatures with 401 without running the provider", async () => {
    const body = JSON.stringify(bootstrap("runner-sig"));
    const now = Math.floor(Date.now() / 1000);
    const cases = [
      { opts: { unsigned: true }, reason: "missing_timestamp" },
      { opts: { headers: { "x-edgerunner-signature": undefined } }, reason: "missing_signature" },
      { opts: { headers: { "x-edgerunner-signature": "sha256=xyz" } }, reason: "malformed_signature" },
      { opts: { headers: { "x-edgerunner-timestamp": "soon" } }, reason: "malformed_timestamp" },
      { opts: { ts: now - 400 }, reason: "stale_timestamp" },
      { opts: { ts: now + 400 }, reason: "stale_timestamp" },
      { opts: { secret: "some-other-secret-entirely" }, reason: "bad_signature" },
    ];
    for (const c of cases) {
      const res = await send(bridge, "POST", "/v1/instances", body, c.opts);
      expect(res.status, c.reason).toBe(401);
      expect(res.body).toEqual({ error: "unauthorized", details: { reason: c.reason } });
    }
    // Signed for another path (a replay against another route) or another body.
    const url = new URL(`${bridge.url}/v1/instances/vm-a`);
    const { signRequest } = await import("../../../src/providers/shim-signing");
    const sig = await signRequest(SECRET, { method: "GET", pathWithQuery: `${url.pathname}x`, body: "" });
    const replay = await send(bridge, "GET", "/v1/instances/vm-a", "", { headers: { ...sig } });
    expect(replay.status).toBe(401);
    expect(world.calls()).toEqual([]);
  });

  it("accepts a request within the 300 s window and one signed with a previous secret", async () => {
    expect((await send(bridge, "GET", "/v1/instances", "", { ts: Math.floor(Date.now() / 1000) - 290 })).status).toBe(200);
    expect((await send(bridge, "GET", "/v1/instances", "", { secret: "the-previous-secret-still-valid" })).status).toBe(200);
  });

  it("verifies against the coordinator's path when a proxy stripped the base path", async () => {
    const { signRequest } = await import("../../../src/providers/shim-signing");
    const headers = {
      ...(await signRequest(SECRET, { method: "GET", pathWithQuery: "/lxd/v1/instances", body: "" })),
      "x-edgerunner-controller-id": CONTROLLER,
      "x-edgerunner-pool-id": POOL,
    };
    const base = bridge.url.replace(/\/lxd$/, "");
    expect((await fetch(`${base}/v1/instances`, { headers })).status).toBe(200);
    expect((await fetch(`${base}/lxd/v1/instances`, { headers })).status).toBe(200);
  });

  it("refuses another controller with 403 when controller_id is configured", async () => {
    const guarded = await startTestBridge(world, { controller_id: CONTROLLER });
    try {
      expect((await send(guarded, "GET", "/v1/instances")).status).toBe(200);
      const other = await send(guarded, "GET", "/v1/instances", "", { headers: { "x-edgerunner-controller-id": "another-coordinator" } });
      expect(other).toMatchObject({ status: 403, body: { error: "this bridge serves another controller" } });
      expect(world.calls().map((c) => c.env.GARM_CONTROLLER_ID)).toEqual([CONTROLLER]);
    } finally {
      await guarded.stop();
    }
  });

  it("answers health checks without a signature and nothing else", async () => {
    expect((await fetch(`${bridge.url}/healthz`)).status).toBe(200);
    expect((await fetch(`${bridge.url}/v1/instances`)).status).toBe(401);
  });
});

describe("requests", () => {
  it("refuses bad context headers and bodies with 4xx and runs nothing", async () => {
    expect((await send(bridge, "GET", "/v1/instances", "", { headers: { "x-edgerunner-pool-id": undefined } })).status).toBe(400);
    expect((await send(bridge, "GET", "/v1/instances", "", { headers: { "x-edgerunner-controller-id": undefined } })).status).toBe(400);
    expect((await send(bridge, "GET", "/v1/instances", "", { headers: { "x-edgerunner-pool-extra-specs": "!!not base64" } })).status).toBe(
      400,
    );
    const notJson = await send(bridge, "POST", "/v1/instances", "{nope");
    expect(notJson.status).toBe(400);
    const bad = await send(bridge, "POST", "/v1/instances", JSON.stringify({ name: "x", tools: "not a list", arch: "sparc" }));
    expect(bad.status).toBe(400);
    expect(bad.body.details.issues).toHaveLength(2);
    expect((await send(bridge, "POST", "/v1/instances", JSON.stringify({ pool_id: "p" }))).status).toBe(400);
    expect((await create("runner-other-pool", { pool_id: "another-pool" })).status).toBe(400);
    expect((await send(bridge, "PUT", "/v1/instances")).status).toBe(405);
    expect((await send(bridge, "GET", "/v1/elsewhere")).status).toBe(404);
    expect(world.calls()).toEqual([]);
  });

  it("maps GARM exit codes: 30 → 404 (delete: gone), 31 → 409, others → 500 with stdout and stderr", async () => {
    expect((await send(bridge, "GET", "/v1/instances/vm-none")).status).toBe(404);
    expect((await send(bridge, "DELETE", "/v1/instances/vm-none")).status).toBe(404);
    expect((await send(bridge, "POST", "/v1/instances/vm-none/start")).status).toBe(404);

    world.configure({ faults: { CreateInstance: { exit: 31, stderr: "name taken by another tenant" } } });
    const dup = await create("runner-dup");
    expect(dup.status).toBe(409);
    expect(dup.body.error).toContain("name taken by another tenant");

    world.configure({ faults: { ListInstances: { exit: 2, stdout: "partial output", stderr: "openstack: 503 from nova" } } });
    const failed = await send(bridge, "GET", "/v1/instances");
    expect(failed.status).toBe(500);
    expect(failed.body.error).toMatch(/ListInstances exited with code 2; stdout: partial output; stderr: openstack: 503 from nova/);

    // Remove all with nothing left to remove.
    world.configure({ faults: { ListInstances: { stdout: "null" } } });
    expect((await send(bridge, "DELETE", "/v1/instances")).status).toBe(204);
  });

  it("answers 502 with the reason when the output breaks GARM's rule", async () => {
    const cases: [string, string, RegExp][] = [
      ["GetInstance", "{not json", /not JSON/],
      ["GetInstance", "", /not JSON: \(nothing\)/],
      ["GetInstance", JSON.stringify({ provider_id: "", name: "runner-x", status: "running" }), /provider_id/],
      [
        "GetInstance",
        JSON.stringify({ provider_id: "vm-x", name: "runner-x", status: "creating" }),
        /status must be one of running, error, stopped, unknown/,
      ],
      ["GetInstance", JSON.stringify({ provider_id: "vm-x", status: "running" }), /name/],
      [
        "ListInstances",
        JSON.stringify([
          { provider_id: "vm-a", name: "a", status: "running" },
          { provider_id: "vm-b", name: "b", status: "booting" },
        ]),
        /invalid list: 1\.status/,
      ],
      ["ListInstances", JSON.stringify({ instances: [] }), /invalid list/],
    ];
    for (const [command, stdout, reason] of cases) {
      world.configure({ faults: { [command]: { stdout } } });
      const res =
        command === "ListInstances" ? await send(bridge, "GET", "/v1/instances") : await send(bridge, "GET", "/v1/instances/vm-x");
      expect(res.status, stdout).toBe(502);
      expect(res.body.error).toMatch(reason);
    }
    // Go's encoding of an empty slice is null: an empty list, not a fault.
    world.configure({ faults: { ListInstances: { stdout: "null" } } });
    expect(await send(bridge, "GET", "/v1/instances")).toMatchObject({ status: 200, body: [] });
  });

  it("refuses a create whose machine has another name, and never echoes the instance token", async () => {
    world.configure({
      faults: {
        GetInstance: { exit: 30 },
        CreateInstance: { stdout: JSON.stringify({ provider_id: "vm-1", name: "someone-else", status: "running" }) },
      },
    });
    const res = await create("runner-wrong-name");
    expect(res.status).toBe(502);
    expect(res.body.error).toMatch(/'someone-else', not 'runner-wrong-name'/);

    const token = bootstrap("runner-echo")["instance-token"];
    world.configure({
      faults: { GetInstance: { exit: 30 }, CreateInstance: { exit: 1, stderr: `cloud-init rejected user data with token ${token}` } },
    });
    const echoed = await create("runner-echo");
    expect(echoed.status).toBe(500);
    expect(echoed.body.error).toContain("[redacted]");
    expect(echoed.body.error).not.toContain(token);
    expect(bridge.rawLogs.join("\n")).not.toContain(token);
    expect(bridge.rawLogs.join("\n")).not.toContain(SECRET);
  });
});

describe("idempotent create", () => {
  it("runs CreateInstance once for concurrent retries and answers every one with the same machine", async () => {
    world.configure({ create_sleep_ms: 400 });
    const [a, b, c] = await Promise.all([create("runner-idem"), create("runner-idem"), create("runner-idem")]);
    const statuses = [a, b, c].map((r) => r.status).sort();
    expect(statuses).toEqual([200, 200, 201]);
    for (const r of [a, b, c]) expect(r.body).toMatchObject({ provider_id: "vm-runner-idem", name: "runner-idem" });
    expect(world.calls().filter((x) => x.command === "CreateInstance")).toHaveLength(1);

    // Later retries are answered from the bridge's own record, asking the provider nothing.
    const again = await create("runner-idem");
    expect(again).toMatchObject({ status: 200, body: { provider_id: "vm-runner-idem" } });
    expect(world.calls().map((x) => x.command)).toEqual(["CreateInstance"]);
  });

  it("answers a duplicate exit with the machine when it is ours (created by a run the bridge forgot)", async () => {
    expect((await create("runner-forgotten")).status).toBe(201);
    // A restarted bridge: no records of its own.
    const forgetful = await startTestBridge(world);
    try {
      const again = () => send(forgetful, "POST", "/v1/instances", JSON.stringify(bootstrap("runner-forgotten")));
      // The provider's lookup by name fails to find it (some clouds index by id only), CreateInstance says duplicate.
      world.configure({ faults: { GetInstance: { exit: 30 }, CreateInstance: { exit: 31 } } });
      expect((await again()).status).toBe(409);
      // With the lookup answering, the duplicate resolves to the existing machine.
      world.configure({ faults: { CreateInstance: { exit: 31 } } });
      expect(await again()).toMatchObject({ status: 200, body: { provider_id: "vm-runner-forgotten" } });
    } finally {
      await forgetful.stop();
    }
  });

  it("makes a delete wait for the create of the same name instead of leaving the machine behind", async () => {
    world.configure({ create_sleep_ms: 700 });
    const creating = create("runner-race");
    await new Promise((r) => setTimeout(r, 250));
    const deleted = await send(bridge, "DELETE", "/v1/instances/runner-race");
    expect((await creating).status).toBe(201);
    expect(deleted.status).toBe(204);
    expect((await send(bridge, "GET", "/v1/instances/runner-race")).status).toBe(404);
  });
});

describe("with the coordinator's shim client", () => {
  it("creates, finds, powers, lists and deletes a machine", async () => {
    const logs = vi.spyOn(console, "log").mockImplementation(() => {});
    try {
      const client = createShimClient(
        { name: "lxd", url: bridge.url, secret: SECRET },
        { controllerId: CONTROLLER, poolId: POOL, extraSpecs: EXTRA_SPECS },
      );
      expect(await client.capabilities()).toMatchObject({
        ok: true,
        value: { interface_version: "v1.1", async: false, batch_create: { max: 4 } },
      });
      const made = await client.createInstance(bootstrap("runner-client") as never);
      expect(made).toEqual({
        ok: true,
        value: { state: "done", instance: expect.objectContaining({ provider_id: "vm-runner-client", status: "running" }) },
      });
      expect(await client.createInstance(bootstrap("runner-client") as never)).toMatchObject({ ok: true, value: { state: "done" } });
      expect(await client.getInstance("vm-runner-client")).toMatchObject({ ok: true, value: { name: "runner-client" } });
      expect(await client.stopInstance("vm-runner-client")).toEqual({ ok: true, value: undefined });
      expect(await client.getInstance("vm-runner-client")).toMatchObject({ ok: true, value: { status: "stopped" } });
      expect(await client.startInstance("vm-runner-client")).toEqual({ ok: true, value: undefined });
      const list = await client.listInstances();
      expect(list.ok && list.value.map((i) => i.name)).toContain("runner-client");
      expect(await client.deleteInstance("vm-runner-client")).toEqual({ ok: true, value: { state: "done" } });
      expect(await client.deleteInstance("vm-runner-client")).toEqual({ ok: true, value: { state: "done" } });
      expect(await client.getInstance("vm-runner-client")).toMatchObject({ ok: false, error: { kind: "not_found" } });
      world.configure({ faults: { GetInstance: { stdout: "garbage" } } });
      // The provider broke GARM's rule, not the bridge the protocol's: a 502 the coordinator retries, with the reason.
      expect(await client.getInstance("vm-runner-client")).toMatchObject({
        ok: false,
        error: { kind: "retryable", status: 502, message: expect.stringContaining("not JSON: garbage") },
      });
      world.configure({ faults: { GetInstance: { exit: 1, stderr: "lxd unreachable" } } });
      expect(await client.getInstance("vm-runner-client")).toMatchObject({
        ok: false,
        error: { kind: "retryable", message: expect.stringContaining("lxd unreachable") },
      });
      expect(await client.removeAllInstances()).toEqual({ ok: true, value: undefined });
    } finally {
      logs.mockRestore();
    }
  });
});
