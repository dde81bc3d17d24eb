import type { Flavor } from "../../src/providers/shim-protocol.ts";

/**
 * The fake EC2's instance types (DescribeInstanceTypes), free of Node imports so the
 * coordinator's tests can use them as a catalogue too. Sizes are AWS's published ones
 * (vCPUs, memory in MiB, GPUs); the fields mirror DescribeInstanceTypes' InstanceTypeInfo.
 * Beside the types runners use, the table holds what a catalogue must leave out: a previous
 * generation (m3.medium, out of the default current-generation filter), a type that is also
 * i386 (t2.micro: amd64), and a Mac (mac1.metal, x86_64_mac: dedicated hosts only).
 */

export interface FakeGpu {
  name: string;
  manufacturer: string;
  count: number;
  memoryMiB: number;
}

export interface FakeInstanceType {
  instanceType: string;
  currentGeneration: boolean;
  /** on-demand, spot, capacity-block. */
  supportedUsageClasses: string[];
  /** i386, x86_64, arm64, x86_64_mac, arm64_mac. */
  supportedArchitectures: string[];
  manufacturer: "Intel" | "AMD" | "AWS" | "Apple";
  defaultVCpus: number;
  defaultCores: number;
  defaultThreadsPerCore: number;
  sizeInMiB: number;
  burstable: boolean;
  bareMetal: boolean;
  gpus?: FakeGpu[];
  /** Instance store (NVMe), GB. */
  instanceStorageGB?: number;
}

type Row = [name: string, vcpus: number, cores: number, mib: number, maker: FakeInstanceType["manufacturer"], arch: string];

const row = ([instanceType, defaultVCpus, defaultCores, sizeInMiB, manufacturer, arch]: Row): FakeInstanceType => ({
  instanceType,
  currentGeneration: true,
  supportedUsageClasses: ["on-demand", "spot"],
  supportedArchitectures: [arch],
  manufacturer,
  defaultVCpus,
  defaultCores,
  defaultThreadsPerCore: defaultVCpus / defaultCores,
  sizeInMiB,
  burstable: instanceType.startsWith("t"),
  bareMetal: false,
});

export const FAKE_INSTANCE_TYPES: FakeInstanceType[] = [
  ...(
    [
      ["t3.micro", 2, 1, 1024, "Intel", "x86_64"],
      ["t3.large", 2, 1, 8192, "Intel", "x86_64"],
      ["m7a.large", 2, 2, 8192, "AMD", "x86_64"],
      ["m7a.xlarge", 4, 4, 16384, "AMD", "x86_64"],
      ["m7a.2xlarge", 8, 8, 32768, "AMD", "x86_64"],
      ["m7i-flex.large", 2, 1, 8192, "Intel", "x86_64"],
      ["m7i-flex.xlarge", 4, 2, 16384, "Intel", "x86_64"],
      ["c7a.xlarge", 4, 4, 8192, "AMD", "x86_64"],
      ["c7a.2xlarge", 8, 8, 16384, "AMD", "x86_64"],
      ["c7g.large", 2, 2, 4096, "AWS", "arm64"],
      ["c7g.xlarge", 4, 4, 8192, "AWS", "arm64"],
      ["c7g.2xlarge", 8, 8, 16384, "AWS", "arm64"],
      ["m7g.xlarge", 4, 4, 16384, "AWS", "arm64"],
    ] satisfies Row[]
  ).map(row),
  {
    ...row(["g5.xlarge", 4, 2, 16384, "AMD", "x86_64"]),
    gpus: [{ name: "A10G", manufacturer: "NVIDIA", count: 1, memoryMiB: 24576 }],
    instanceStorageGB: 250,
  },
  { ...row(["t2.micro", 1, 1, 1024, "Intel", "x86_64"]), supportedArchitectures: ["i386", "x86_64"] },
  { ...row(["m3.medium", 1, 1, 3840, "Intel", "x86_64"]), currentGeneration: false, supportedArchitectures: ["i386", "x86_64"] },
  {
    ...row(["mac1.metal", 12, 6, 32768, "Intel", "x86_64_mac"]),
    supportedUsageClasses: ["on-demand"],
    bareMetal: true,
  },
];

/**
 * The flavors a v1.2 shim should list for these types, straight from the table: the usable
 * architectures, the family before the dot, the GPUs, no disk and no price (EC2 publishes none).
 */
export function expectedEc2Flavors(types: FakeInstanceType[] = FAKE_INSTANCE_TYPES.filter((t) => t.currentGeneration)): Flavor[] {
  return types
    .flatMap((t): Flavor[] => {
      const arch = t.supportedArchitectures.includes("x86_64") ? "amd64" : t.supportedArchitectures.includes("arm64") ? "arm64" : null;
      if (!arch) return [];
      const gpu = t.gpus?.[0];
      return [
        {
          name: t.instanceType,
          vcpus: t.defaultVCpus,
          memory_mib: t.sizeInMiB,
          architecture: arch,
          family: t.instanceType.split(".")[0]!,
          gpu: gpu ? { count: gpu.count, model: `${gpu.manufacturer} ${gpu.name}` } : null,
          disk_gb: null,
          price_per_hour: null,
          spot: t.supportedUsageClasses.includes("spot"),
        },
      ];
    })
    .sort((a, b) => a.name.localeCompare(b.name));
}
