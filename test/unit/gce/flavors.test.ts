/**
 * The GCE shim's protocol v1.2 decisions: each machine type as a flavor, the types every zone
 * of a pool has, and a job's shape over the pool's extra specs.
 */
import { describe, expect, it } from "vitest";
import { parseExtraSpecs } from "../../../shims/gce/extra-specs";
import { type GceMachineType, inEveryZone, toFlavor, toFlavors } from "../../../shims/gce/machine-types";
import { shapedSpecs } from "../../../shims/gce/shape";

const specs = (raw: unknown) => {
  const s = parseExtraSpecs(raw);
  if (!s.ok) throw new Error(s.problems.join("; "));
  return s.specs;
};

const type = (name: string, over: Partial<GceMachineType> = {}): GceMachineType => ({ name, guestCpus: 4, memoryMb: 16384, ...over });

describe("machine types as flavors", () => {
  it("the architecture Compute Engine gives, else the series': T2A, C4A and N4A are Arm", () => {
    expect(toFlavor(type("c4a-standard-4", { architecture: "ARM64" }))?.architecture).toBe("arm64");
    expect(toFlavor(type("n2-standard-4", { architecture: "X86_64" }))?.architecture).toBe("amd64");
    expect(toFlavor(type("t2a-standard-4"))?.architecture).toBe("arm64");
    expect(toFlavor(type("n4a-standard-4", { architecture: "ARCHITECTURE_UNSPECIFIED" }))?.architecture).toBe("arm64");
    expect(toFlavor(type("c3-standard-4"))?.architecture).toBe("amd64");
  });

  it("the series is the family, accelerators the GPU; Spot, no disk, no price", () => {
    const a3 = type("a3-highgpu-8g", {
      accelerators: [
        { guestAcceleratorType: "nvidia-h100-80gb", guestAcceleratorCount: 8 },
        { guestAcceleratorType: "nvidia-h100-80gb", guestAcceleratorCount: 0 },
      ],
    });
    expect(toFlavor(a3)).toEqual({
      name: "a3-highgpu-8g",
      vcpus: 4,
      memory_mib: 16384,
      architecture: "amd64",
      family: "a3",
      gpu: { count: 8, model: "nvidia-h100-80gb" },
      disk_gb: null,
      price_per_hour: null,
      spot: true,
    });
  });

  it("types an insert would refuse (OBSOLETE, DELETED) or without sizes are left out; DEPRECATED ones still work", () => {
    expect(toFlavor(type("n1-standard-4", { deprecated: { state: "OBSOLETE" } }))).toBeNull();
    expect(toFlavor(type("n1-standard-4", { deprecated: { state: "DELETED" } }))).toBeNull();
    expect(toFlavor(type("n1-standard-4", { deprecated: { state: "DEPRECATED" } }))).not.toBeNull();
    expect(toFlavor(type("n1-standard-4", { guestCpus: 0 }))).toBeNull();
    expect(toFlavor({ name: "n1-standard-4" })).toBeNull();
  });

  it("a pool's catalogue is what every one of its zones has, each type once, by name", () => {
    const a = [type("n2-standard-4"), type("t2a-standard-4"), type("c3-standard-4")];
    const c = [type("c3-standard-4"), type("n2-standard-4"), type("g2-standard-4")];
    expect(inEveryZone([a, c]).map((m) => m.name)).toEqual(["n2-standard-4", "c3-standard-4"]);
    expect(inEveryZone([a]).map((m) => m.name)).toEqual(a.map((m) => m.name));
    expect(inEveryZone([])).toEqual([]);
    expect(toFlavors([...a, ...a]).map((f) => f.name)).toEqual(["c3-standard-4", "n2-standard-4", "t2a-standard-4"]);
  });
});

describe("a job's shape over the pool's extra specs", () => {
  const pool = specs({ capacity: "spot-with-fallback", disk_size_gb: 30, disk_type: "pd-ssd" });

  it("disk_gb is the boot disk, spot: true is Spot alone; the rest is the pool's", () => {
    expect(shapedSpecs(pool, { disk_gb: 80, spot: true })).toEqual({ ok: true, specs: { ...pool, disk_size_gb: 80, capacity: "spot" } });
    expect(shapedSpecs(pool, { disk_gb: null, spot: false })).toEqual({ ok: true, specs: pool });
  });

  it("a disk under Compute Engine's smallest boot disk is refused", () => {
    expect(shapedSpecs(pool, { disk_gb: 9, spot: false })).toMatchObject({ ok: false });
    expect(shapedSpecs(pool, { disk_gb: 10, spot: false })).toMatchObject({ ok: true });
  });
});
