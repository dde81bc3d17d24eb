// The edges of the bridge's HTTP side: what it refuses before any provider runs (body size,
// methods, broken percent-encoding), and the one log line each answered request leaves.
import { request as httpRequest } from "node:http";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { signRequest } from "../../../src/providers/shim-signing";
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
  bridge = await startTestBridge(world, { base_path: "/lxd" });
});
afterAll(async () => {
  await bridge.stop();
  world.cleanup();
});
afterEach(() => {
  world.configure({});
  world.clearCalls();
  bridge.rawLogs.length = 0;
});

/** A signed request with a raw target, sent as is (fetch would normalize it). */
async function raw(method: string, target: string, body = "") {
  const headers = {
    ...(await signRequest(SECRET, { method, pathWithQuery: target, body })),
    "x-edgerunner-controller-id": CONTROLLER,
    "x-edgerunner-pool-id": POOL,
  };
  const { port } = new URL(bridge.url);
  return new Promise<{ status: number; body: string }>((resolve, reject) => {
    const req = httpRequest({ host: "127.0.0.1", port, method, path: target, headers }, (res) => {
      let text = "";
      res.on("data", (c) => (text += c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
    req.on("error", reject);
    req.end(body || undefined);
  });
}

const requestLogs = () => bridge.logs.filter((l) => l.event === "bridge_request");

describe("refusals before the provider runs", () => {
  it("refuses a body over 1 MiB with 413", async () => {
    const res = await send(
      bridge,
      "POST",
      "/v1/instances",
      JSON.stringify({ ...bootstrap("runner-big"), padding: "x".repeat(1024 * 1024) }),
    );
    expect(res).toMatchObject({ status: 413, body: { error: "request body over 1048576 bytes" } });
    expect(world.calls()).toEqual([]);
  });

  it("answers 405 for a method a path does not take, HEAD included, and 404 for unknown paths", async () => {
    expect(await send(bridge, "GET", "/v1/instances/vm-a/start")).toMatchObject({
      status: 405,
      body: { error: "GET is not allowed on /lxd/v1/instances/vm-a/start" },
    });
    expect(await send(bridge, "POST", "/v1/capabilities")).toMatchObject({ status: 405 });
    expect((await send(bridge, "HEAD", "/v1/instances")).status).toBe(405);
    expect((await send(bridge, "HEAD", "/v1/instances/vm-a")).status).toBe(405);
    expect(await send(bridge, "GET", "/v1/instances/vm-a/reboot")).toMatchObject({
      status: 404,
      body: { error: "no route GET /lxd/v1/instances/vm-a/reboot" },
    });
    expect((await send(bridge, "GET", "/v1/instances/")).status).toBe(404);
    expect(world.calls()).toEqual([]);
  });

  it("refuses an instance id that is not valid percent-encoding, and decodes one that is", async () => {
    expect(await raw("GET", "/lxd/v1/instances/vm%E0%A4%A")).toMatchObject({ status: 400 });
    expect(JSON.parse((await raw("DELETE", "/lxd/v1/instances/vm%ZZ")).body)).toEqual({
      error: "instance id is not valid percent-encoding",
    });
    expect(world.calls()).toEqual([]);
    expect((await raw("GET", "/lxd/v1/instances/vm%2Fa%20b")).status).toBe(404);
    expect(world.calls().map((c) => c.env.GARM_INSTANCE_ID)).toEqual(["vm/a b"]);
  });

  it("answers health checks on GET only, at the root and under the base path", async () => {
    const root = bridge.url.replace(/\/lxd$/, "");
    for (const url of [`${root}/healthz`, `${bridge.url}/healthz`]) {
      const res = await fetch(url);
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ ok: true, running: 0, queued: 0 });
    }
    expect((await fetch(`${bridge.url}/healthz`, { method: "POST" })).status).toBe(401);
    expect((await fetch(`${bridge.url}/healthz`, { method: "HEAD" })).status).toBe(401);
    expect(requestLogs().map((l) => l.status)).toEqual([401, 401]);
  });
});

describe("the request log", () => {
  it("writes one line per answered request with its operation, instance, status and error", async () => {
    await send(bridge, "GET", "/v1/instances/vm-none");
    await send(bridge, "GET", "/v1/instances", "", { secret: "some-other-secret-entirely" });
    await send(bridge, "PUT", "/v1/instances");
    await send(bridge, "POST", "/v1/instances/vm-a/stop", "", { headers: { "x-edgerunner-pool-id": undefined } });
    const lines = requestLogs();
    expect(lines).toEqual([
      {
        event: "bridge_request",
        method: "GET",
        operation: "get",
        scale_set: POOL,
        instance: "vm-none",
        status: 404,
        duration_ms: expect.any(Number),
        error: "no instance vm-none",
      },
      {
        event: "bridge_request",
        method: "GET",
        operation: "unknown",
        scale_set: POOL,
        status: 401,
        duration_ms: expect.any(Number),
        error: "unauthorized",
      },
      {
        event: "bridge_request",
        method: "PUT",
        operation: "unknown",
        scale_set: POOL,
        status: 405,
        duration_ms: expect.any(Number),
        error: "PUT is not allowed on /lxd/v1/instances",
      },
      {
        event: "bridge_request",
        method: "POST",
        operation: "stop",
        instance: "vm-a",
        status: 400,
        duration_ms: expect.any(Number),
        error: "missing X-Edgerunner-Pool-Id",
      },
    ]);
  });
});
