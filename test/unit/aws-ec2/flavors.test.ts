/**
 * The EC2 shim's protocol v1.2 decisions: which types a catalogue asks EC2 for, each
 * DescribeInstanceTypes item as a flavor, and a job's shape over the pool's extra specs.
 */
import { describe, expect, it } from "vitest";
import { parseDescribeInstanceTypes, parseXml } from "../../../shims/aws-ec2/ec2-xml";
import { parseExtraSpecs } from "../../../shims/aws-ec2/extra-specs";
import { catalogueFilters, toFlavor, toFlavors } from "../../../shims/aws-ec2/instance-types";
import { shapedSpecs } from "../../../shims/aws-ec2/shape";

const specs = (raw: unknown) => {
  const s = parseExtraSpecs(raw);
  if (!s.ok) throw new Error(s.problems.join("; "));
  return s.specs;
};

const type = (over: Partial<Parameters<typeof toFlavor>[0]> = {}) => ({
  instanceType: "c7a.xlarge",
  currentGeneration: true,
  vcpus: 4,
  memoryMib: 8192,
  architectures: ["x86_64"],
  usageClasses: ["on-demand", "spot"],
  gpus: [],
  ...over,
});

describe("the catalogue's types", () => {
  it("the pool's instance_types (once each), else every current-generation type", () => {
    expect(catalogueFilters(specs({ instance_types: ["m7a.large", "c7g.large", "m7a.large"] }))).toEqual([
      { name: "instance-type", values: ["c7g.large", "m7a.large"] },
    ]);
    expect(catalogueFilters(specs({}))).toEqual([{ name: "current-generation", values: ["true"] }]);
  });

  it("each item as a flavor: the family before the dot, spot where EC2 offers it, GPUs summed", () => {
    expect(toFlavor(type({ instanceType: "m7i-flex.large", usageClasses: ["on-demand"] }))).toMatchObject({
      family: "m7i-flex",
      spot: false,
      gpu: null,
      disk_gb: null,
      price_per_hour: null,
    });
    const gpus = [
      { name: "A10G", manufacturer: "NVIDIA", count: 4 },
      { name: "A10G", manufacturer: "NVIDIA", count: 4 },
    ];
    expect(toFlavor(type({ instanceType: "g5.48xlarge", gpus }))?.gpu).toEqual({ count: 8, model: "NVIDIA A10G" });
  });

  it("x86_64 (with or without i386) is amd64, arm64 is arm64; i386 alone, Macs and items without sizes are left out", () => {
    expect(toFlavor(type({ architectures: ["i386", "x86_64"] }))?.architecture).toBe("amd64");
    expect(toFlavor(type({ architectures: ["arm64"] }))?.architecture).toBe("arm64");
    for (const architectures of [["i386"], ["x86_64_mac"], ["arm64_mac"], []]) expect(toFlavor(type({ architectures }))).toBeNull();
    expect(toFlavor(type({ vcpus: Number.NaN }))).toBeNull();
    expect(toFlavor(type({ memoryMib: 0 }))).toBeNull();
    expect(toFlavor(type({ instanceType: "nodot" }))).toBeNull();
  });

  it("reads DescribeInstanceTypes' XML: sets of items, numbers as text, the next page's token", () => {
    const doc = parseXml(`<?xml version="1.0" encoding="UTF-8"?>
<DescribeInstanceTypesResponse xmlns="http://ec2.amazonaws.com/doc/2016-11-15/"><requestId>r</requestId>
<instanceTypeSet><item><instanceType>c7g.large</instanceType><currentGeneration>true</currentGeneration>
<supportedUsageClasses><item>on-demand</item></supportedUsageClasses>
<processorInfo><supportedArchitectures><item>arm64</item></supportedArchitectures></processorInfo>
<vCpuInfo><defaultVCpus>2</defaultVCpus></vCpuInfo><memoryInfo><sizeInMiB>4096</sizeInMiB></memoryInfo></item>
<item><instanceType>c7g.large</instanceType><processorInfo><supportedArchitectures><item>arm64</item></supportedArchitectures></processorInfo>
<vCpuInfo><defaultVCpus>2</defaultVCpus></vCpuInfo><memoryInfo><sizeInMiB>4096</sizeInMiB></memoryInfo></item></instanceTypeSet>
<nextToken>page-2</nextToken></DescribeInstanceTypesResponse>`);
    const page = parseDescribeInstanceTypes(doc);
    expect(page.nextToken).toBe("page-2");
    expect(page.types[0]).toEqual(
      type({ instanceType: "c7g.large", vcpus: 2, memoryMib: 4096, architectures: ["arm64"], usageClasses: ["on-demand"] }),
    );
    // An item twice (EC2 does not, but a catalogue must never list a name twice).
    expect(toFlavors(page.types).map((f) => [f.name, f.spot])).toEqual([["c7g.large", false]]);
  });
});

describe("a job's shape over the pool's extra specs", () => {
  const pool = specs({ capacity: "spot-with-fallback", instance_types: ["t3.micro"], root_volume_size_gb: 30, spot_max_price: "0.1" });

  it("disk_gb is the root volume; spot: true is spot alone; only the chosen type is tried", () => {
    expect(shapedSpecs(pool, { disk_gb: 80, spot: true }, "c7a.xlarge")).toEqual({
      ok: true,
      specs: { ...pool, root_volume_size_gb: 80, capacity: "spot", instance_types: undefined },
    });
  });

  it("no disk and spot: false leave the pool's own; without a flavor its instance_types stay", () => {
    expect(shapedSpecs(pool, { disk_gb: null, spot: false }, "")).toEqual({ ok: true, specs: pool });
  });

  it("a disk over the largest root volume the shim makes (gp3's 16 TiB) is refused", () => {
    expect(shapedSpecs(pool, { disk_gb: 16_385, spot: false }, "c7a.xlarge")).toMatchObject({ ok: false });
    expect(shapedSpecs(pool, { disk_gb: 16_384, spot: false }, "c7a.xlarge")).toMatchObject({ ok: true });
  });
});
