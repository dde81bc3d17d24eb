// The bridge runs providers written for GARM the way GARM runs them: a provider like GARM's
// contrib scripts (exit 1 for a missing machine, no pool on delete, no GetVersion) gets
// creates, cannot be made to delete another pool's machine, and sees GARM's environment.
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { providerEnv } from "../../../shims/garm-bridge/provider-env";
import { contribProvider } from "./contrib-provider";
import { bootstrap, makeProviderWorld, POOL, type ProviderWorld, send, startTestBridge, type TestBridge } from "./harness";

const OTHER_POOL = "9d1f3b7a-0c2e-4e8f-a5b6-7c8d9e0f1a2b";

let world: ProviderWorld;
let contrib: ReturnType<typeof contribProvider>;
let bridges: TestBridge[] = [];

beforeAll(() => {
  world = makeProviderWorld();
});
afterAll(() => world.cleanup());
afterEach(async () => {
  for (const b of bridges) await b.stop();
  bridges = [];
});

async function contribBridge(over: Record<string, unknown> = {}, environ?: NodeJS.ProcessEnv) {
  contrib ??= contribProvider(world);
  const bridge = await startTestBridge(
    world,
    { provider_executable: contrib.executable, provider_config_file: contrib.configFile, interface_version: "v0.1.0", ...over },
    environ,
  );
  bridges.push(bridge);
  return bridge;
}

const createIn = (bridge: TestBridge, name: string, pool = POOL) =>
  send(bridge, "POST", "/v1/instances", JSON.stringify(bootstrap(name, { pool_id: pool })), { headers: { "x-edgerunner-pool-id": pool } });
const callsAfter = (n: number) => contrib.calls().slice(n);

describe("creates, as GARM makes them", () => {
  it("runs CreateInstance without asking GetInstance first, and answers a retry from its own record", async () => {
    const bridge = await contribBridge();
    const before = contrib.calls().length;
    const made = await createIn(bridge, "runner-contrib-1");
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    expect(made.body).toMatchObject({ name: "runner-contrib-1", status: "running" });
    // The retry of a create whose answer was lost: same machine, no second server (OpenStack allows duplicate names).
    expect(await createIn(bridge, "runner-contrib-1")).toMatchObject({ status: 200, body: { provider_id: made.body.provider_id } });
    expect(callsAfter(before).map((c) => c.command)).toEqual(["CreateInstance"]);
    expect(contrib.servers().filter((s) => s.name === "runner-contrib-1")).toHaveLength(1);
  });

  it("with create_lookup: list, finds a machine made before a restart by ListInstances", async () => {
    expect((await createIn(await contribBridge(), "runner-contrib-2")).status).toBe(201);
    const restarted = await contribBridge({ create_lookup: "list" });
    const before = contrib.calls().length;
    expect(await createIn(restarted, "runner-contrib-2")).toMatchObject({ status: 200, body: { name: "runner-contrib-2" } });
    expect(callsAfter(before).map((c) => c.command)).toEqual(["ListInstances"]);
    expect(contrib.servers().filter((s) => s.name === "runner-contrib-2")).toHaveLength(1);
  });

  it("accepts a BootstrapInstance without the fields Go decodes as zero values", async () => {
    const bridge = await contribBridge();
    const minimal = { name: "runner-contrib-min", pool_id: POOL, tools: null, "ssh-keys": null, labels: null, "ca-cert-bundle": null };
    const made = await send(bridge, "POST", "/v1/instances", JSON.stringify(minimal));
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    // Present fields still need GARM's types.
    const wrong = await send(
      bridge,
      "POST",
      "/v1/instances",
      JSON.stringify({ ...minimal, name: "runner-contrib-bad", jit_config_enabled: "yes" }),
    );
    expect(wrong.status).toBe(400);
  });
});

describe("pool scoping", () => {
  it("refuses to delete, stop or start another pool's machine, though the provider ignores the pool", async () => {
    const bridge = await contribBridge();
    const id = "srv-contrib-mine";
    contrib.seed({ id, name: "runner-contrib-mine", pool: POOL });
    const before = contrib.calls().length;
    const other = { headers: { "x-edgerunner-pool-id": OTHER_POOL } };
    for (const target of [id, "runner-contrib-mine"]) {
      expect((await send(bridge, "DELETE", `/v1/instances/${target}`, "", other)).status).toBe(404);
      expect((await send(bridge, "POST", `/v1/instances/${target}/stop`, "", other)).status).toBe(404);
      expect((await send(bridge, "POST", `/v1/instances/${target}/start`, "", other)).status).toBe(404);
    }
    expect(contrib.servers().map((s) => s.id)).toContain(id);
    // Asked the other pool's list, never DeleteInstance or StopInstance.
    expect(new Set(callsAfter(before).map((c) => c.command))).toEqual(new Set(["ListInstances"]));
    expect(callsAfter(before).every((c) => c.pool === OTHER_POOL)).toBe(true);
    // Its own pool deletes it, even through a bridge that never saw it made.
    const fresh = await contribBridge();
    expect((await send(fresh, "DELETE", `/v1/instances/${id}`)).status).toBe(204);
    expect(contrib.servers().map((s) => s.id)).not.toContain(id);
  });

  it("removes all of the pool's machines one by one, and none of another pool's", async () => {
    const bridge = await contribBridge();
    contrib.seed({ id: "srv-all-1", name: "runner-all-1", pool: POOL });
    contrib.seed({ id: "srv-all-2", name: "runner-all-2", pool: POOL });
    contrib.seed({ id: "srv-all-other", name: "runner-all-other", pool: OTHER_POOL });
    const before = contrib.calls().length;
    expect((await send(bridge, "DELETE", "/v1/instances")).status).toBe(204);
    const ids = contrib.servers().map((s) => s.id);
    expect(ids).toContain("srv-all-other");
    expect(ids).not.toContain("srv-all-1");
    expect(ids).not.toContain("srv-all-2");
    // The contrib script does not implement RemoveAllInstances (and in v0.1.0 it would get no pool).
    expect(callsAfter(before).map((c) => c.command)).not.toContain("RemoveAllInstances");
  });

  it("checks the pool in async mode too", async () => {
    const bridge = await contribBridge({ async: true, callback_url: "http://127.0.0.1:9/callbacks", callback_attempts: 1 });
    contrib.seed({ id: "srv-contrib-async", name: "runner-contrib-async", pool: POOL });
    const res = await send(bridge, "DELETE", "/v1/instances/srv-contrib-async", "", { headers: { "x-edgerunner-pool-id": OTHER_POOL } });
    expect(res.status).toBe(404);
    expect(contrib.servers().map((s) => s.name)).toContain("runner-contrib-async");
  });
});

describe("GARM's environment", () => {
  it("never runs GetVersion, which GARM does not run either", async () => {
    const bridge = await contribBridge();
    const before = contrib.calls().length;
    const caps = await send(bridge, "GET", "/v1/capabilities");
    expect(caps.status).toBe(200);
    expect(caps.body.provider_version).toBeUndefined();
    expect(callsAfter(before)).toEqual([]);
  });

  it("passes variables by name prefix, and the proxy variables always, never GARM*", async () => {
    const environ = {
      PATH: "/usr/bin:/bin",
      OS_CLOUD: "ci",
      OS_REGION_NAME: "RegionOne",
      OSX: "not a prefix match",
      https_proxy: "http://proxy.internal:3128",
      NO_PROXY: "localhost",
      GARM_SECRET_THING: "no",
      BRIDGE_OWN_SECRET: "must-not-leak",
    };
    const bridge = await contribBridge({ pass_env: ["OS_"] }, environ);
    const before = contrib.calls().length;
    expect((await send(bridge, "GET", "/v1/instances")).status).toBe(200);
    const [call] = callsAfter(before);
    expect(call!.env).toEqual(expect.arrayContaining(["OS_CLOUD", "OS_REGION_NAME", "https_proxy", "NO_PROXY"]));
    for (const name of ["OSX", "GARM_SECRET_THING", "BRIDGE_OWN_SECRET"]) expect(call!.env).not.toContain(name);
    // The exact rule, without a shell in between.
    const env = providerEnv(
      { command: "ListInstances", controllerId: "c", poolId: "p" },
      { interfaceVersion: "v0.1.0", providerConfigFile: "", env: {}, passEnv: ["G"] },
      { GARM_X: "1", GITHUB_TOKEN: "t", HTTP_PROXY_USER: "u" },
    );
    expect(env).toMatchObject({ GITHUB_TOKEN: "t", HTTP_PROXY_USER: "u" });
    expect(env.GARM_X).toBeUndefined();
  });
});
