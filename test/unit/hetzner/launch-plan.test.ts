import { describe, expect, it } from "vitest";
import { describeFailures, launchPlan, ruledOut } from "../../../shims/hetzner/launch-plan.ts";

describe("the Hetzner launch plan", () => {
  it("tries the flavor in every location, in order, before the next server type; duplicates once", () => {
    const plan = launchPlan("cx22", { server_types: ["cpx21", "cx22"], locations: ["fsn1", "nbg1"] });
    expect(plan.map((a) => `${a.serverType}@${a.location}`)).toEqual(["cx22@fsn1", "cx22@nbg1", "cpx21@fsn1", "cpx21@nbg1"]);
  });

  it("without locations Hetzner picks one; without a flavor the server types alone", () => {
    expect(launchPlan("", { server_types: ["cax11"] })).toEqual([{ serverType: "cax11", location: null }]);
  });

  it("a project limit rules out the same server type everywhere, not the others", () => {
    const failures = [{ attempt: { serverType: "cx22", location: "fsn1" }, code: "resource_limit_exceeded" }];
    expect(ruledOut({ serverType: "cx22", location: "nbg1" }, failures)).toBe(true);
    expect(ruledOut({ serverType: "cpx21", location: "fsn1" }, failures)).toBe(false);
    expect(ruledOut({ serverType: "cx22", location: "nbg1" }, [{ ...failures[0]!, code: "resource_unavailable" }])).toBe(false);
    expect(describeFailures([...failures, { attempt: { serverType: "cpx21", location: null }, code: "placement_error" }])).toBe(
      "cx22 in fsn1: resource_limit_exceeded; cpx21 in any location: placement_error",
    );
  });
});
