/**
 * The Hetzner shim's flavor catalogue and shaped creates, without HTTP: server types (the fake
 * Hetzner's table, in Hetzner's own shape) to flavors per location, the per-isolate cache of
 * server types, and what a shape does to a create's extra specs.
 */
import { describe, expect, it } from "vitest";
import { catalogueFor, flavorOf, serverTypeFamily } from "../../../shims/hetzner/flavors.ts";
import { type HcloudServerType, SERVER_TYPES_TTL_MS, ServerTypeCache } from "../../../shims/hetzner/server-types.ts";
import { shapedSpecs, shapeProblems } from "../../../shims/hetzner/shape.ts";
import { validateFlavorCatalogue } from "../../../src/providers/shim-protocol.ts";
import { FAKE_SERVER_TYPES, fakeServerType } from "../../fake-hetzner/server-types.ts";

const table: HcloudServerType[] = [...FAKE_SERVER_TYPES];
const type = (name: string) => structuredClone(fakeServerType(name)!) as HcloudServerType;
const specs = { enable_ipv4: true, enable_ipv6: true };

describe("server types as flavors", () => {
  it("maps each type sold in the location: cores, memory in MiB, architecture, family, fixed disk, the hourly net price, never spot", () => {
    const { catalogue, left_out } = catalogueFor(table, "fsn1");
    expect(validateFlavorCatalogue(catalogue).ok).toBe(true);
    expect(catalogue.currency).toBe("EUR");
    expect(catalogue.flavors.find((f) => f.name === "cax21")).toEqual({
      name: "cax21",
      vcpus: 4,
      memory_mib: 8192,
      architecture: "arm64",
      family: "cax",
      gpu: null,
      disk_gb: 80,
      price_per_hour: Number(type("cax21").prices!.find((p) => p.location === "fsn1")!.price_hourly!.net),
      spot: false,
    });
    expect(catalogue.flavors.find((f) => f.name === "cx22")).toMatchObject({
      vcpus: 2,
      memory_mib: 4096,
      architecture: "amd64",
      family: "cx",
    });
    expect(catalogue.flavors.find((f) => f.name === "ccx13")).toMatchObject({ family: "ccx", disk_gb: 80 });
    expect(catalogue.flavors.every((f) => f.spot === false && typeof f.price_per_hour === "number")).toBe(true);
    // cx11 is deprecated: left out, and counted.
    expect(catalogue.flavors.map((f) => f.name)).not.toContain("cx11");
    expect([catalogue.flavors.length, left_out]).toEqual([14, 1]);
  });

  it("prices come from the location, and a type not sold there is left out", () => {
    const ash = catalogueFor(table, "ash").catalogue;
    expect(ash.flavors.map((f) => f.family).sort()).toEqual(["ccx", "ccx", "ccx", "cpx", "cpx", "cpx"]);
    const price = (c: typeof ash, name: string) => c.flavors.find((f) => f.name === name)?.price_per_hour;
    expect(price(ash, "cpx11")).toBeGreaterThan(price(catalogueFor(table, "fsn1").catalogue, "cpx11")!);
    expect(catalogueFor(table, "sin").catalogue.flavors).toEqual([]);
  });

  it("a deprecation for one location removes the type there only; Hetzner's locations list is believed over its prices", () => {
    const cpx11 = type("cpx11");
    cpx11.locations = cpx11.locations!.map((l) =>
      l.name === "hel1" ? { ...l, deprecation: { announced: "2026-01-01T00:00:00Z", unavailable_after: "2026-04-01T00:00:00Z" } } : l,
    );
    expect(flavorOf(cpx11, "hel1")).toBeNull();
    expect(flavorOf(cpx11, "nbg1")?.name).toBe("cpx11");
    cpx11.locations = cpx11.locations.filter((l) => l.name !== "nbg1");
    expect(flavorOf(cpx11, "nbg1")).toBeNull();
  });

  it("a type the protocol cannot carry is left out rather than spoiling the catalogue; an unreadable price is null", () => {
    const noCores = { ...type("cx32"), cores: 0 };
    const riscv = { ...type("cx42"), architecture: "riscv" };
    const oddPrice = type("cx52");
    oddPrice.prices = oddPrice.prices!.map((p) => ({ ...p, price_hourly: { net: "n/a", gross: "n/a" } }));
    const { catalogue, left_out } = catalogueFor([noCores, riscv, oddPrice, type("cx22"), type("cx22")], "fsn1");
    expect(catalogue.flavors.map((f) => [f.name, f.price_per_hour])).toEqual([
      ["cx52", null],
      ["cx22", 0.006],
    ]);
    expect(left_out).toBe(3);
    expect(validateFlavorCatalogue(catalogue).ok).toBe(true);
  });

  it("a family is the letters a type's name starts with", () => {
    expect(["cx22", "cax21", "ccx13", "cpx11", "cx"].map(serverTypeFamily)).toEqual(["cx", "cax", "ccx", "cpx", "cx"]);
  });
});

describe("the server types cache", () => {
  it("answers from memory for ten minutes per key, then asks again; a failed read is not kept", async () => {
    let now = 1_000_000;
    const cache = new ServerTypeCache(() => now);
    let loads = 0;
    const ok = async () => {
      loads++;
      return { ok: true as const, value: table.slice(0, loads) };
    };
    expect((await cache.get("a", ok)).ok).toBe(true);
    now += SERVER_TYPES_TTL_MS - 1;
    expect(await cache.get("a", ok)).toEqual({ ok: true, value: table.slice(0, 1) });
    await cache.get("b", ok);
    expect(loads).toBe(2);
    now += 1;
    expect(await cache.get("a", ok)).toEqual({ ok: true, value: table.slice(0, 3) });
    const failed = { ok: false as const, error: { code: "unavailable", message: "down", status: 503 } };
    expect(await cache.get("c", async () => failed)).toBe(failed);
    expect(await cache.get("c", ok)).toEqual({ ok: true, value: table.slice(0, 4) });
  });
});

describe("a shaped create's extra specs", () => {
  it("spot is refused whatever the type, and so is a shape without a flavor", () => {
    expect(shapeProblems({ disk_gb: null, spot: true }, "cx22")).toEqual([
      expect.stringMatching(/^shape\.spot: Hetzner Cloud has no spot/),
    ]);
    expect(shapeProblems({ disk_gb: null, spot: false }, "")).toEqual([expect.stringMatching(/^flavor: a shaped create names/)]);
    expect(shapeProblems({ disk_gb: null, spot: false }, "cx22")).toEqual([]);
    expect(shapeProblems(undefined, "")).toEqual([]);
  });

  it("a disk larger than the type's is refused naming both sizes; one it holds is fine", () => {
    const r = shapedSpecs({ disk_gb: 80, spot: false }, "cx22", specs, table);
    expect(r).toEqual({ ok: false, problem: expect.stringContaining("cx22 comes with a 40 GB disk, smaller than the 80 GB asked") });
    expect(shapedSpecs({ disk_gb: 40, spot: false }, "cx22", specs, table)).toEqual({
      ok: true,
      specs: { ...specs, server_types: undefined },
    });
    expect(shapedSpecs({ disk_gb: null, spot: false }, "cx99", specs, table)).toEqual({
      ok: false,
      problem: "flavor: cx99 is not a server type Hetzner Cloud offers",
    });
  });

  it("keeps only the pool's fallback types that are at least the chosen one, in the pool's order", () => {
    const withFallbacks = { ...specs, server_types: ["cpx11", "cax21", "cx32", "cpx31", "ccx23", "cx42"] };
    // cx32 (4 cores, 8 GB, 80 GB): cpx11 is smaller, cax21 is Arm; cx42 and ccx23 are larger, cpx31 equal.
    const r = shapedSpecs({ disk_gb: null, spot: false }, "cx32", withFallbacks, table);
    expect(r).toEqual({ ok: true, specs: { ...specs, server_types: ["cx32", "cpx31", "ccx23", "cx42"] } });
    // A disk of 160 GB rules out the types with less.
    const big = shapedSpecs({ disk_gb: 160, spot: false }, "cx42", withFallbacks, table);
    expect(big).toEqual({ ok: true, specs: { ...specs, server_types: ["cx42"] } });
    // Nothing left: no fallbacks at all rather than an empty list.
    expect(shapedSpecs({ disk_gb: null, spot: false }, "cx52", withFallbacks, table)).toEqual({
      ok: true,
      specs: { ...specs, server_types: undefined },
    });
  });
});
