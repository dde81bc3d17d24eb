import { describe, expect, it } from "vitest";
import { catalogueFor } from "../../../shims/hetzner/flavors";
import type { HcloudServerType } from "../../../shims/hetzner/server-types";
import type { FlavorCatalogue } from "../../../src/providers/shim-protocol";
import { chooseFlavor } from "../../../src/shapes/flavor-choice";
import { type ShapeBoundsInput, ShapeBoundsSchema, shapeRequest } from "../../../src/shapes/shape-bounds";
import { parseShapeLabels } from "../../../src/shapes/shape-label";
import { expectedEc2Flavors } from "../../fake-ec2/instance-types";
import { expectedGceFlavors } from "../../fake-gce/machine-types";
import { FAKE_SERVER_TYPES } from "../../fake-hetzner/server-types";

// The catalogues the three cloud fakes serve, as their shims turn them into flavors.
const ec2: FlavorCatalogue = { flavors: expectedEc2Flavors(), currency: "USD" };
const gce: FlavorCatalogue = { flavors: expectedGceFlavors(["us-central1-a"]), currency: "USD" };
const hetzner = catalogueFor(FAKE_SERVER_TYPES as unknown as HcloudServerType[], "fsn1").catalogue;

const wide: ShapeBoundsInput = {
  cpu: { min: 2, max: 16 },
  ram_gb: { min: 2, max: 64 },
  architectures: ["amd64", "arm64"],
  spot: true,
  max_gpus: 1,
  images: { "ubuntu-24.04": "img-2404" },
};

/** The flavor a job's label gets from a catalogue, or the problem. */
function pick(catalogue: FlavorCatalogue, label: string, bounds: ShapeBoundsInput = wide): string {
  const b = ShapeBoundsSchema.parse(bounds);
  const parsed = parseShapeLabels([label], b.key);
  if (parsed.kind !== "shape") throw new Error(JSON.stringify(parsed));
  const asked = shapeRequest(parsed.shape, b, parsed.shape.runId);
  if (!asked.ok) return `refused: ${asked.problem}`;
  const choice = chooseFlavor(catalogue, asked.request, b);
  return choice.ok ? choice.flavor.name : `none: ${choice.problem}`;
}

describe("flavor choice", () => {
  it("EC2 (no prices): the smallest that fits, the job's family order breaking ties", () => {
    expect(pick(ec2, "edgerunner=1/cpu=4/ram=16")).toBe("m7a.xlarge");
    expect(pick(ec2, "edgerunner=1/cpu=4/ram=16/family=m7i-flex+m7a")).toBe("m7i-flex.xlarge");
    expect(pick(ec2, "edgerunner=1/cpu=4/ram=8/family=c7a")).toBe("c7a.xlarge");
    expect(pick(ec2, "edgerunner=1/cpu=2/ram=4/arch=arm64")).toBe("c7g.large");
    expect(pick(ec2, "edgerunner=1/cpu=4/ram=16/arch=arm64")).toBe("m7g.xlarge");
    // A GPU only when asked for, and then one with it.
    expect(pick(ec2, "edgerunner=1/cpu=4/ram=16/gpu=1")).toBe("g5.xlarge");
  });

  it("GCE: the zones' machine types, arm64 from the architecture", () => {
    expect(pick(gce, "edgerunner=1/cpu=4/ram=16/family=n2")).toBe("n2-standard-4");
    expect(pick(gce, "edgerunner=1/cpu=4/ram=32/family=n2")).toBe("n2-highmem-4");
    expect(pick(gce, "edgerunner=1/cpu=4/ram=16/arch=arm64/family=c4a")).toBe("c4a-standard-4");
    expect(pick(gce, "edgerunner=1/cpu=4/ram=16/gpu=1")).toBe("g2-standard-4");
  });

  it("Hetzner (priced in EUR): the cheapest that fits, even when not the smallest", () => {
    // cpx21 (3 vCPUs, 4 GB) costs more than cx22 (2 vCPUs, 4 GB): cx22 for 2 vCPUs.
    expect(pick(hetzner, "edgerunner=1/cpu=2/ram=4")).toBe("cx22");
    expect(pick(hetzner, "edgerunner=1/cpu=4/ram=8")).toBe("cx32");
    expect(pick(hetzner, "edgerunner=1/cpu=4/ram=8/arch=arm64")).toBe("cax21");
    expect(pick(hetzner, "edgerunner=1/cpu=4/ram=16/family=ccx")).toBe("ccx23");
    // The disk comes with the server type: 80 GB needs one with at least that (cx32 is cheaper than cpx21).
    expect(pick(hetzner, "edgerunner=1/cpu=2/ram=4/disk=80")).toBe("cx32");
    expect(pick(hetzner, "edgerunner=1/cpu=2/ram=4/disk=80/family=cpx+ccx")).toBe("cpx21");
    // No spot at Hetzner.
    expect(pick(hetzner, "edgerunner=1/cpu=2/spot=true")).toMatch(/^none: .*none of them is offered as spot$/);
  });

  it("says which ask left no flavor", () => {
    expect(pick(ec2, "edgerunner=1/cpu=16/ram=64/arch=arm64")).toBe(
      "none: of the provider's 15 flavors, 4 flavors are arm64, without a GPU; none of them is with 16 vCPUs or more",
    );
    expect(pick(ec2, "edgerunner=1/family=x2iedn")).toBe(
      "none: of the provider's 15 flavors, 11 flavors are amd64; none of them is of family x2iedn",
    );
  });

  it("never goes above the bounds, whatever family the job names", () => {
    // c7a's smallest is 4 vCPUs: with a 2 vCPU ceiling there is none, not a bigger machine.
    const tight = { ...wide, cpu: { min: 1, max: 2 } };
    expect(pick(ec2, "edgerunner=1/cpu=2/ram=2/family=c7a", tight)).toMatch(/none of them is within this scale set's 2 vCPUs and 64 GB$/);
  });

  it("checks the bounds before any flavor", () => {
    expect(pick(ec2, "edgerunner=1/cpu=128")).toBe("refused: cpu=128 is above this scale set's 16");
    expect(pick(ec2, "edgerunner=1/ram=1")).toBe("refused: ram=1 is below this scale set's 2 GB");
    expect(pick(ec2, "edgerunner=1/disk=2000")).toBe("refused: disk=2000 is above this scale set's 1000 GB");
    expect(pick(ec2, "edgerunner=1/image=windows-2022")).toBe(
      "refused: image=windows-2022 is not one of this scale set's images (ubuntu-24.04)",
    );
    expect(pick(ec2, "edgerunner=1/spot=true", { ...wide, spot: false })).toBe("refused: spot=true is not allowed on this scale set");
    expect(pick(ec2, "edgerunner=1/gpu=2")).toBe("refused: gpu=2 is above this scale set's 1");
    expect(pick(ec2, "edgerunner=1/arch=arm64", { ...wide, architectures: ["amd64"] })).toBe(
      "refused: arch=arm64 is not allowed here (allowed: amd64)",
    );
    expect(pick(ec2, "edgerunner=1/family=g5", { ...wide, families: ["m7a", "c7a"] })).toBe(
      "refused: family=g5 is not allowed here (allowed: m7a, c7a)",
    );
  });
});
