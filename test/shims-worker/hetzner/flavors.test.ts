import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { validateFlavorCatalogue } from "../../../src/providers/shim-protocol";
import { FAKE_SERVER_TYPES, fakeServerType } from "../../fake-hetzner/server-types";
import { bootstrap, creates, shimWorld } from "./harness";

/**
 * Protocol v1.2 on the Hetzner shim, in workerd against the fake Hetzner Cloud: the flavor
 * catalogue read from Hetzner's server types (paged, cached per isolate), and shaped creates.
 * Each test has a project of its own: the cache is keyed by the project's token, so one test's
 * server types never answer another's.
 */

let logs: string[] = [];
beforeEach(() => {
  logs = [];
  vi.spyOn(console, "log").mockImplementation((line: unknown) => void logs.push(String(line)));
});
afterEach(() => vi.restoreAllMocks());

const typeCalls = async (w: Awaited<ReturnType<typeof shimWorld>>) =>
  (await w.project.requests()).filter((r) => r.path.startsWith("/server_types")).map((r) => r.path);

describe("GET /v1/flavors", () => {
  it("lists the server types sold in the pool's first location, priced there in euros, reading every page once per isolate", async () => {
    const w = await shimWorld();
    const res = await w.call("GET", "/v1/flavors", { specs: { locations: ["nbg1", "ash"] } });
    expect(res.status).toBe(200);
    const v = validateFlavorCatalogue(res.body);
    expect(v.ok).toBe(true);
    expect(res.body.currency).toBe("EUR");
    const names = res.body.flavors.map((f: { name: string }) => f.name);
    expect(names).toEqual(FAKE_SERVER_TYPES.filter((t) => !t.deprecated).map((t) => t.name));
    const cx42 = fakeServerType("cx42")!;
    expect(res.body.flavors.find((f: { name: string }) => f.name === "cx42")).toEqual({
      name: "cx42",
      vcpus: 8,
      memory_mib: 16384,
      architecture: "amd64",
      family: "cx",
      gpu: null,
      disk_gb: 160,
      price_per_hour: Number(cx42.prices.find((p) => p.location === "nbg1")!.price_hourly.net),
      spot: false,
    });
    // The fake serves 5 server types a page: the shim followed next_page to the end.
    expect(await typeCalls(w)).toEqual([1, 2, 3].map((page) => `/server_types?per_page=50&page=${page}`));
    // Another location, later: the same server types, from the isolate's memory.
    const ash = await w.call("GET", "/v1/flavors", { specs: { locations: ["ash"] } });
    expect(ash.body.flavors.map((f: { family: string }) => f.family)).toEqual(["cpx", "cpx", "cpx", "ccx", "ccx", "ccx"]);
    expect(await typeCalls(w)).toHaveLength(3);
    const line = logs.map((l) => JSON.parse(l)).find((l) => l.event === "shim_request" && l.location === "ash");
    expect(line).toMatchObject({ operation: "flavors", status: 200, flavors: 6, server_types_left_out: 9, hcloud_calls: 0 });
  });

  it("a pool without locations gets FLAVORS_LOCATION's catalogue (fsn1 unless set); a bad setting or bad extra specs is refused", async () => {
    const w = await shimWorld();
    const fsn1 = await w.call("GET", "/v1/flavors");
    expect(fsn1.body.flavors).toHaveLength(14);
    const hil = await w.call("GET", "/v1/flavors", { env: { FLAVORS_LOCATION: "hil" } });
    expect(hil.body.flavors.map((f: { name: string }) => f.name)).toEqual(["cpx11", "cpx21", "cpx31", "ccx13", "ccx23", "ccx33"]);
    const broken = await w.call("GET", "/v1/flavors", { env: { FLAVORS_LOCATION: "Falkenstein 1" } });
    expect([broken.status, broken.body.error]).toEqual([500, expect.stringMatching(/FLAVORS_LOCATION must be a Hetzner location/)]);
    const bad = await w.call("GET", "/v1/flavors", { specs: { location: "fsn1" } });
    expect([bad.status, bad.body.error]).toEqual([400, expect.stringMatching(/extra_specs\.location: unknown key/)]);
  });

  it("is signed like every route (401 before Hetzner is called), and Hetzner's trouble is answered as for any call", async () => {
    const w = await shimWorld();
    const unsigned = await w.call("GET", "/v1/flavors", { headers: { "X-Edgerunner-Signature": undefined } });
    expect(unsigned.status).toBe(401);
    expect(await w.project.requests()).toEqual([]);
    await w.project.setFaults({ calls: [{ method: "GET", path: "/server_types", code: "maintenance", times: 1 }] });
    const down = await w.call("GET", "/v1/flavors");
    expect([down.status, down.body.error]).toEqual([503, expect.stringMatching(/^cannot list flavors: .*maintenance/)]);
    // Not remembered: the next request asks Hetzner again and succeeds.
    expect((await w.call("GET", "/v1/flavors")).status).toBe(200);
  });

  it("a type Hetzner deprecates in one location is left out there", async () => {
    const deprecation = { announced: "2026-01-01T00:00:00Z", unavailable_after: "2026-04-01T00:00:00Z" };
    const server_types = FAKE_SERVER_TYPES.map((t) =>
      t.name === "cax11" ? { ...t, locations: t.locations.map((l) => (l.name === "hel1" ? { ...l, deprecation } : l)) } : t,
    );
    const w = await shimWorld({ server_types });
    const names = async (location: string) =>
      (await w.call("GET", "/v1/flavors", { specs: { locations: [location] } })).body.flavors.map((f: { name: string }) => f.name);
    expect(await names("hel1")).not.toContain("cax11");
    expect(await names("fsn1")).toContain("cax11");
  });
});

describe("a shaped create", () => {
  it("spot is refused with a clear error before Hetzner is called", async () => {
    const w = await shimWorld();
    const res = await w.call("POST", "/v1/instances", { body: bootstrap({ shape: { disk_gb: null, spot: true } }) });
    expect(res.status).toBe(400);
    expect(res.body.details).toEqual([expect.stringMatching(/^shape\.spot: Hetzner Cloud has no spot \(preemptible\) servers/)]);
    expect(await w.project.requests()).toEqual([]);
  });

  it("a disk larger than the server type's is refused naming both; a disk it holds creates the server", async () => {
    const w = await shimWorld();
    const big = await w.call("POST", "/v1/instances", { body: bootstrap({ flavor: "cx22", shape: { disk_gb: 100, spot: false } }) });
    expect(big.status).toBe(400);
    expect(big.body.error).toMatch(/cx22 comes with a 40 GB disk, smaller than the 100 GB asked/);
    expect(await creates(w.project)).toEqual([]);
    const fits = await w.call("POST", "/v1/instances", { body: bootstrap({ flavor: "cx32", shape: { disk_gb: 80, spot: false } }) });
    expect(fits.status).toBe(201);
    expect((await w.project.servers()).map((s) => s.server_type)).toEqual(["cx32"]);
  });

  it("the shape needs no server types when it asks nothing of the disk and the pool has no fallbacks", async () => {
    const w = await shimWorld();
    const res = await w.call("POST", "/v1/instances", {
      body: bootstrap({ flavor: "cax11", arch: "arm64", shape: { disk_gb: null, spot: false } }),
    });
    expect([res.status, res.body.os_arch]).toEqual([201, "arm64"]);
    expect(await typeCalls(w)).toEqual([]);
  });

  it("falls back only to the pool's server types at least as large as the chosen one", async () => {
    const w = await shimWorld();
    await w.project.setFaults({ create: [{ code: "resource_unavailable", server_type: "cx32" }] });
    const res = await w.call("POST", "/v1/instances", {
      body: bootstrap({
        flavor: "cx32",
        shape: { disk_gb: null, spot: false },
        extra_specs: { locations: ["fsn1"], server_types: ["cpx11", "cax21", "cpx31"] },
      }),
    });
    expect(res.status).toBe(201);
    expect((await creates(w.project)).map((c) => [c.type, c.error])).toEqual([
      ["cx32", "resource_unavailable"],
      ["cpx31", null],
    ]);
  });

  it("without a shape the pool's fallbacks are tried as before, whatever their size", async () => {
    const w = await shimWorld();
    await w.project.setFaults({ create: [{ code: "resource_unavailable", server_type: "cx32" }] });
    const res = await w.call("POST", "/v1/instances", {
      body: bootstrap({ flavor: "cx32", extra_specs: { locations: ["fsn1"], server_types: ["cpx11"] } }),
    });
    expect(res.status).toBe(201);
    expect((await creates(w.project)).map((c) => c.type)).toEqual(["cx32", "cpx11"]);
    expect(await typeCalls(w)).toEqual([]);
  });
});
