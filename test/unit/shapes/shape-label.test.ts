import { describe, expect, it } from "vitest";
import { isShapeLabel, parseShapeLabels } from "../../../src/shapes/shape-label";

const shapeOf = (labels: string[], key = "edgerunner") => {
  const parsed = parseShapeLabels(labels, key);
  if (parsed.kind !== "shape") throw new Error(`expected a shape, got ${JSON.stringify(parsed)}`);
  return parsed.shape;
};
const problemOf = (labels: string[], key = "edgerunner") => {
  const parsed = parseShapeLabels(labels, key);
  if (parsed.kind !== "invalid") throw new Error(`expected a problem, got ${JSON.stringify(parsed)}`);
  return parsed.problem;
};

describe("shape labels", () => {
  it("reads every field, with / or , between them", () => {
    const slash = shapeOf(["edgerunner=4242/cpu=4/ram=16/arch=arm64/image=ubuntu-24.04/disk=80/spot=true/family=c7a+m7a/gpu=1"]);
    expect(slash).toMatchObject({
      runId: "4242",
      cpu: 4,
      ramGb: 16,
      arch: "arm64",
      image: "ubuntu-24.04",
      diskGb: 80,
      spot: true,
      families: ["c7a", "m7a"],
      gpus: 1,
      labels: ["edgerunner=4242/cpu=4/ram=16/arch=arm64/image=ubuntu-24.04/disk=80/spot=true/family=c7a+m7a/gpu=1"],
    });
    const comma = shapeOf([
      "self-hosted",
      "edgerunner=4242,cpu=4,ram=16,arch=arm64,image=ubuntu-24.04,disk=80,spot=true,family=c7a+m7a,gpu=1",
    ]);
    expect({ ...comma, labels: [], identity: "" }).toEqual({ ...slash, labels: [], identity: "" });
  });

  it("leaves unsaid fields to the bounds, and takes x64 for amd64", () => {
    expect(shapeOf(["edgerunner=7/arch=x64"])).toMatchObject({
      cpu: null,
      ramGb: null,
      diskGb: null,
      image: null,
      spot: null,
      families: [],
      gpus: null,
      arch: "amd64",
    });
    expect(shapeOf(["edgerunner=7"]).runId).toBe("7");
  });

  it("takes the array form: fields as labels of their own beside the key label", () => {
    const s = shapeOf(["self-hosted", "edgerunner=99", "cpu=8", "RAM=32"]);
    expect(s).toMatchObject({ runId: "99", cpu: 8, ramGb: 32, labels: ["edgerunner=99", "cpu=8", "RAM=32"] });
    // The identity ignores case and order: the same shape written otherwise is the same runner.
    expect(shapeOf(["ram=32", "cpu=8", "EDGERUNNER=99"]).identity).toBe(s.identity);
  });

  it("is a different identity for another run or another shape", () => {
    const a = shapeOf(["edgerunner=1/cpu=4"]).identity;
    expect(shapeOf(["edgerunner=2/cpu=4"]).identity).not.toBe(a);
    expect(shapeOf(["edgerunner=1/cpu=8"]).identity).not.toBe(a);
  });

  it("is none without the key label, and reads only its own key", () => {
    expect(parseShapeLabels(["self-hosted", "linux", "cpu=4"], "edgerunner")).toEqual({ kind: "none" });
    expect(parseShapeLabels(["big=1/cpu=4"], "edgerunner")).toEqual({ kind: "none" });
    expect(shapeOf(["big=1/cpu=4"], "big").cpu).toBe(4);
  });

  it("refuses what it cannot read exactly, saying what", () => {
    expect(problemOf(["edgerunner=cpu=4"])).toMatch(/first field after edgerunner= must be the run id/);
    // biome-ignore lint/suspicious/noTemplateCurlyInString: `${{ github.run_id }}` is the GitHub Actions expression a workflow writes, not a placeholder
    expect(problemOf(["edgerunner=${{ github.run_id }}/cpu=4"])).toMatch(/must be the run id/);
    expect(problemOf(["edgerunner=1/cpu=4/cpu=8"])).toBe("cpu is given twice");
    expect(problemOf(["edgerunner=1/cpu=4", "cpu=8"])).toBe("cpu is given twice");
    expect(problemOf(["edgerunner=1/cpus=4"])).toMatch(/^unknown field cpus \(known: cpu, ram/);
    expect(problemOf(["edgerunner=1/cpu=four"])).toBe("cpu=four is not a whole number");
    expect(problemOf(["edgerunner=1/cpu=0"])).toBe("cpu=0 is below 1");
    expect(problemOf(["edgerunner=1/ram=1.5"])).toBe("ram=1.5 is not a whole number");
    expect(problemOf(["edgerunner=1/arch=riscv64"])).toBe("arch=riscv64 is not amd64, x64 or arm64");
    expect(problemOf(["edgerunner=1/spot=yes"])).toBe("spot=yes is not true or false");
    expect(problemOf(["edgerunner=1/family=c7a+c7a"])).toBe("family=c7a+c7a names a family twice");
    expect(problemOf(["edgerunner=1/family=c7a++m7a"])).toMatch(/is not a family name/);
    expect(problemOf(["edgerunner=1/image=ami-0/../x"])).toMatch(/is not field=value|is not an image name/);
    expect(problemOf(["edgerunner=1/cpu=4/"])).toMatch(/has an empty field/);
    expect(problemOf(["edgerunner=1/cpu="])).toBe("cpu has no value");
    expect(problemOf(["edgerunner=1/cpu", "x"])).toBe('"cpu" is not field=value');
    expect(problemOf(["edgerunner=1/cpu=4", "edgerunner=2/cpu=4"])).toBe("more than one edgerunner= label");
  });

  it("knows which labels are the shape's", () => {
    expect(isShapeLabel("edgerunner=1/cpu=4", "edgerunner")).toBe(true);
    expect(isShapeLabel("CPU=4", "edgerunner")).toBe(true);
    expect(isShapeLabel("self-hosted", "edgerunner")).toBe(false);
    expect(isShapeLabel("linux=1", "edgerunner")).toBe(false);
  });
});
