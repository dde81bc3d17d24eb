import type { Flavor, FlavorCatalogue } from "../../src/providers/shim-protocol.ts";

/**
 * The simulator's flavor catalogue unless it is given another (protocol v1.2): made-up sizes
 * that cover what the coordinator's choice has to weigh. Several families, x86 and Arm, so
 * `family=` and the architecture narrow the choice; sizes of each family in steps, so "the
 * smallest that fits" means something; Arm cheaper than x86 and a dearer dedicated family, so
 * "cheapest first" does; one without a price, which the cheapest-first order must still place;
 * some not on spot and one with a fixed local disk, so a shape can be refused; a GPU size.
 * Prices are in US dollars an hour, plausible for a public cloud.
 */
/** One size: its family is the part of its name before the dot. */
const size = (
  name: string,
  vcpus: number,
  memoryGib: number,
  architecture: Flavor["architecture"],
  price_per_hour: number | null,
  spot: boolean,
  more: Partial<Flavor> = {},
): Flavor => ({
  name,
  vcpus,
  memory_mib: memoryGib * 1024,
  architecture,
  family: name.split(".")[0]!,
  gpu: null,
  disk_gb: null,
  price_per_hour,
  spot,
  ...more,
});

export const DEFAULT_SIMULATOR_FLAVORS: FlavorCatalogue = {
  currency: "USD",
  flavors: [
    // General purpose x86: 4 GiB a vCPU.
    size("g1.small", 2, 8, "amd64", 0.024, true),
    size("g1.medium", 4, 16, "amd64", 0.048, true),
    size("g1.large", 8, 32, "amd64", 0.096, true),
    size("g1.xlarge", 16, 64, "amd64", 0.192, true),
    // Compute x86: 2 GiB a vCPU, cheaper than g1 of as many vCPUs.
    size("c1.small", 2, 4, "amd64", 0.02, true),
    size("c1.medium", 4, 8, "amd64", 0.04, true),
    size("c1.large", 8, 16, "amd64", 0.08, true),
    // Memory x86: 8 GiB a vCPU, on-demand only.
    size("m1.large", 4, 32, "amd64", 0.1, false),
    // Arm: 4 GiB a vCPU, cheaper than g1 of the same size; the largest on-demand only.
    size("a1.small", 2, 8, "arm64", 0.019, true),
    size("a1.medium", 4, 16, "arm64", 0.038, true),
    size("a1.large", 8, 32, "arm64", 0.077, false),
    // Dedicated x86 with a fixed local disk (as a Hetzner server type's), on-demand only.
    size("d1.medium", 4, 16, "amd64", 0.09, false, { disk_gb: 160 }),
    // An old size whose price the cloud does not publish.
    size("legacy.medium", 4, 8, "amd64", null, false),
    size("gpu1.xlarge", 8, 64, "amd64", 0.8, true, { gpu: { count: 1, model: "nvidia-l4" } }),
  ],
};
