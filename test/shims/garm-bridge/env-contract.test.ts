// The bridge runs the provider exactly as GARM does: only GARM's variables for the interface
// version and command, plus the configured ones — nothing from the bridge's own environment —
// and CreateInstance's stdin is the request body byte for byte.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { providerEnv } from "../../../shims/garm-bridge/provider-env";
import {
  bootstrap,
  CONTROLLER,
  EXTRA_SPECS_B64,
  makeProviderWorld,
  POOL,
  type ProviderWorld,
  send,
  startTestBridge,
  type TestBridge,
} from "./harness";

const bridgeEnv = { PATH: "/usr/bin:/bin", HOME: "/root", HTTPS_PROXY: "http://proxy.internal:3128", BRIDGE_OWN_SECRET: "must-not-leak" };

for (const version of ["v0.1.0", "v0.1.1"] as const) {
  describe(`interface ${version}`, () => {
    let world: ProviderWorld;
    let bridge: TestBridge;

    beforeAll(async () => {
      world = makeProviderWorld();
      bridge = await startTestBridge(
        world,
        { interface_version: version, env: { LXD_REMOTE: "local" }, pass_env: ["HTTPS_PROXY", "NOT_SET_ANYWHERE"] },
        bridgeEnv,
      );
    });
    afterAll(async () => {
      await bridge.stop();
      world.cleanup();
    });

    const base = {
      GARM_CONTROLLER_ID: CONTROLLER,
      GARM_INTERFACE_VERSION: version,
      LXD_REMOTE: "local",
      HTTPS_PROXY: "http://proxy.internal:3128",
    };
    const v011 = version === "v0.1.1";
    const pool = v011 ? { GARM_POOL_ID: POOL, GARM_POOL_EXTRASPECS: EXTRA_SPECS_B64 } : {};

    it("passes exactly GARM's variables for each command", async () => {
      world.clearCalls();
      const configFile = { GARM_PROVIDER_CONFIG_FILE: world.configFile };
      // Odd spacing and key order: the provider must get these bytes, not a re-serialization.
      const body = JSON.stringify(bootstrap("runner-env-1"), null, 3).replace('"name"', '"name" ');
      const created = await send(bridge, "POST", "/v1/instances", body, { headers: { "x-edgerunner-pool-extra-specs": EXTRA_SPECS_B64 } });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      expect(created.body).toMatchObject({ provider_id: "vm-runner-env-1", name: "runner-env-1", status: "running" });
      expect((await send(bridge, "GET", "/v1/instances/vm-runner-env-1")).status).toBe(200);
      expect((await send(bridge, "GET", "/v1/instances")).status).toBe(200);
      expect((await send(bridge, "POST", "/v1/instances/vm-runner-env-1/stop")).status).toBe(204);
      expect((await send(bridge, "POST", "/v1/instances/vm-runner-env-1/start")).status).toBe(204);
      expect((await send(bridge, "DELETE", "/v1/instances/vm-runner-env-1")).status).toBe(204);
      expect((await send(bridge, "DELETE", "/v1/instances")).status).toBe(204);
      const caps = await send(bridge, "GET", "/v1/capabilities");
      expect(caps.body).toEqual({
        interface_version: "v1.1",
        async: false,
        idempotent_create: true,
        garm_interface_version: version,
        batch_create: { max: 4 },
      });

      const calls = world.calls();
      // No GetInstance before the create, no GetVersion for the capabilities, no RemoveAllInstances: GARM runs none of them.
      expect(calls.map((c) => c.command)).toEqual([
        "CreateInstance",
        "GetInstance",
        "ListInstances",
        "StopInstance",
        "StartInstance",
        "DeleteInstance",
        "ListInstances", // remove all: the pool's machines, deleted one by one
      ]);
      const envOf = (i: number) => calls[i]!.env;
      const instance = (id: string) => ({ GARM_INSTANCE_ID: id });
      expect(envOf(0)).toEqual({
        ...base,
        ...configFile,
        GARM_POOL_ID: POOL,
        ...(v011 ? { GARM_POOL_EXTRASPECS: EXTRA_SPECS_B64 } : {}),
        GARM_COMMAND: "CreateInstance",
      });
      expect(envOf(1)).toEqual({ ...base, ...configFile, ...pool, GARM_COMMAND: "GetInstance", ...instance("vm-runner-env-1") });
      expect(envOf(2)).toEqual({
        ...base,
        ...configFile,
        GARM_POOL_ID: POOL,
        ...(v011 ? { GARM_POOL_EXTRASPECS: EXTRA_SPECS_B64 } : {}),
        GARM_COMMAND: "ListInstances",
      });
      expect(envOf(3)).toEqual({ ...base, ...configFile, ...pool, GARM_COMMAND: "StopInstance", ...instance("vm-runner-env-1") });
      expect(envOf(4)).toEqual({ ...base, ...configFile, ...pool, GARM_COMMAND: "StartInstance", ...instance("vm-runner-env-1") });
      expect(envOf(5)).toEqual({ ...base, ...configFile, ...pool, GARM_COMMAND: "DeleteInstance", ...instance("vm-runner-env-1") });
      expect(envOf(6)).toEqual(envOf(2));

      for (const c of calls) {
        expect(c.env.PATH).toBeUndefined();
        expect(c.env.BRIDGE_OWN_SECRET).toBeUndefined();
        expect(c.command === "CreateInstance" ? c.stdin : "").toBe(c.command === "CreateInstance" ? body : "");
      }
    });

    it("uses the instance name as GARM_INSTANCE_ID when that is what the coordinator has", async () => {
      world.clearCalls();
      // The pool lists it (so the bridge will delete it); the provider then finds nothing by that name.
      world.configure({
        faults: { ListInstances: { stdout: JSON.stringify([{ provider_id: "vm-slash", name: "runner/with slash", status: "running" }]) } },
      });
      expect((await send(bridge, "DELETE", `/v1/instances/${encodeURIComponent("runner/with slash")}`)).status).toBe(404);
      world.configure({});
      expect(world.calls().find((c) => c.command === "DeleteInstance")!.env.GARM_INSTANCE_ID).toBe("runner/with slash");
    });
  });
}

describe("providerEnv", () => {
  const settings = { providerConfigFile: "/etc/garm/lxd.toml", env: { A: "1" }, passEnv: ["B"] };
  it("gives configured variables but never lets them replace GARM's", () => {
    const env = providerEnv(
      { command: "ListInstances", controllerId: "c", poolId: "p", extraSpecsBase64: "e30=" },
      { ...settings, interfaceVersion: "v0.1.1", env: { A: "1", GARM_POOL_ID: "evil" } },
      { B: "2", C: "3" },
    );
    expect(env).toEqual({
      A: "1",
      B: "2",
      GARM_COMMAND: "ListInstances",
      GARM_CONTROLLER_ID: "c",
      GARM_PROVIDER_CONFIG_FILE: "/etc/garm/lxd.toml",
      GARM_INTERFACE_VERSION: "v0.1.1",
      GARM_POOL_ID: "p",
      GARM_POOL_EXTRASPECS: "e30=",
    });
  });
  it("leaves the pool out of v0.1.0 instance commands", () => {
    const env = providerEnv(
      { command: "DeleteInstance", controllerId: "c", poolId: "p", instanceId: "i" },
      { ...settings, interfaceVersion: "v0.1.0" },
      {},
    );
    expect(env.GARM_POOL_ID).toBeUndefined();
    expect(env.GARM_POOL_EXTRASPECS).toBeUndefined();
    expect(env.GARM_INSTANCE_ID).toBe("i");
  });
});
