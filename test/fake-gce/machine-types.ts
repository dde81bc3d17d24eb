import type { Flavor } from "../../src/providers/shim-protocol.ts";

/**
 * The fake Compute Engine's machine types (machineTypes.list), free of Node imports so the
 * coordinator's tests can use them as a catalogue too. Sizes are Google's published ones; the
 * fields are the discovery document's MachineType. Some series are not in every zone (as T2A
 * and G2 are not), so a pool's catalogue is what all of its zones have. Only C4A says its
 * architecture here (Compute Engine leaves it out on many types): T2A's must come from its series.
 */

export interface FakeMachineType {
  name: string;
  description: string;
  guestCpus: number;
  memoryMb: number;
  isSharedCpu: boolean;
  maximumPersistentDisks: number;
  maximumPersistentDisksSizeGb: string;
  architecture?: "ARM64" | "X86_64";
  accelerators?: { guestAcceleratorType: string; guestAcceleratorCount: number }[];
  /** The zones that have it; absent: every zone of the project. */
  zones?: string[];
}

const standard = (name: string, cpus: number, mb: number, extra: Partial<FakeMachineType> = {}): FakeMachineType => ({
  name,
  description: `${cpus} vCPUs ${mb / 1024} GB RAM`,
  guestCpus: cpus,
  memoryMb: mb,
  isSharedCpu: false,
  maximumPersistentDisks: 128,
  maximumPersistentDisksSizeGb: "263168",
  ...extra,
});

const T2A_ZONES = ["us-central1-a", "us-central1-b", "us-central1-f"];

export const FAKE_MACHINE_TYPES: FakeMachineType[] = [
  {
    name: "e2-small",
    description: "Efficient Instance, 2 vCPU (1/2 shared physical core) and 2 GB RAM",
    guestCpus: 2,
    memoryMb: 2048,
    isSharedCpu: true,
    maximumPersistentDisks: 16,
    maximumPersistentDisksSizeGb: "3072",
  },
  standard("e2-standard-2", 2, 8192, { description: "Efficient Instance, 2 vCPUs, 8 GB RAM" }),
  standard("e2-standard-4", 4, 16384, { description: "Efficient Instance, 4 vCPUs, 16 GB RAM" }),
  standard("n2-standard-2", 2, 8192),
  standard("n2-standard-4", 4, 16384),
  standard("n2-standard-8", 8, 32768),
  standard("n2-highmem-4", 4, 32768),
  standard("c3-standard-4", 4, 16384),
  standard("t2a-standard-2", 2, 8192, { zones: T2A_ZONES }),
  standard("t2a-standard-4", 4, 16384, { zones: T2A_ZONES }),
  standard("c4a-standard-4", 4, 16384, { architecture: "ARM64" }),
  standard("g2-standard-4", 4, 16384, {
    description: "4 vCPUs, 16 GB RAM, 1 NVIDIA L4 GPU",
    accelerators: [{ guestAcceleratorType: "nvidia-l4", guestAcceleratorCount: 1 }],
    zones: ["us-central1-a", "us-central1-b", "us-central1-c", "europe-west1-b", "europe-west1-c"],
  }),
];

/** The types a zone has, in the fake's (and Compute Engine's) order: by name. */
export const machineTypesIn = (zone: string, types: FakeMachineType[] = FAKE_MACHINE_TYPES) =>
  types.filter((t) => !t.zones || t.zones.includes(zone)).sort((a, b) => a.name.localeCompare(b.name));

/**
 * The flavors a v1.2 shim should list for a pool in these zones, straight from the table: the
 * types every zone has, the series as family, Arm for T2A and C4A, the accelerators as the GPU,
 * Spot, no disk and no price.
 */
export function expectedGceFlavors(zones: string[], types: FakeMachineType[] = FAKE_MACHINE_TYPES): Flavor[] {
  return types
    .filter((t) => zones.every((z) => !t.zones || t.zones.includes(z)))
    .map(
      (t): Flavor => ({
        name: t.name,
        vcpus: t.guestCpus,
        memory_mib: t.memoryMb,
        architecture: /^(t2a|c4a)-/.test(t.name) ? "arm64" : "amd64",
        family: t.name.split("-")[0]!,
        gpu: t.accelerators?.[0] ? { count: t.accelerators[0].guestAcceleratorCount, model: t.accelerators[0].guestAcceleratorType } : null,
        disk_gb: null,
        price_per_hour: null,
        spot: true,
      }),
    )
    .sort((a, b) => a.name.localeCompare(b.name));
}
