import { describe, expect, it } from "vitest";
import { parseLabelSelector } from "../../fake-hetzner/label-selector.ts";

describe("the fake Hetzner's label selector", () => {
  const labels = { env: "prod", team: "ci", "example.com/x": "1" };
  const matches = (s: string) => parseLabelSelector(s)!(labels);

  it("speaks Hetzner's expressions, all terms required", () => {
    expect(matches("env==prod,team=ci")).toBe(true);
    expect(matches("env==prod,team!=ci")).toBe(false);
    expect(matches("example.com/x")).toBe(true);
    expect(matches("!missing")).toBe(true);
    expect(matches("env in (dev,prod)")).toBe(true);
    expect(matches("env notin (dev,prod)")).toBe(false);
    expect(matches("missing==")).toBe(false);
  });

  it("refuses what does not parse", () => {
    expect(parseLabelSelector("env in prod")).toBeNull();
  });
});
