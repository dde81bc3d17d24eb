import { describe, expect, it } from "vitest";
import { normalizeLabels } from "../../../src/intake/labels";

describe("normalizeLabels", () => {
  it("makes a sorted, lower-cased set without blanks", () => {
    expect(normalizeLabels([" Linux", "self-hosted", "X64", "linux", "", "  "])).toEqual(["linux", "self-hosted", "x64"]);
  });
  it("gives the same set for the same labels in any order or case", () => {
    expect(normalizeLabels(["GPU", "Linux"])).toEqual(normalizeLabels(["linux", "gpu"]));
  });
});
