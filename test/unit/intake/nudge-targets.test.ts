import { describe, expect, it } from "vitest";
import { nudgeTargets } from "../../../src/intake/nudge-targets";

describe("nudgeTargets", () => {
  it("wakes the scale set of a queued or waiting job", () => {
    expect(nudgeTargets({ status: "queued", scaleSetId: "a", instanceScaleSetId: null })).toEqual(["a"]);
    expect(nudgeTargets({ status: "waiting", scaleSetId: "a", instanceScaleSetId: null })).toEqual(["a"]);
  });

  it("wakes nothing for an unmatched job no runner of ours took", () => {
    expect(nudgeTargets({ status: "queued", scaleSetId: null, instanceScaleSetId: null })).toEqual([]);
  });

  it("wakes nothing when a job goes in_progress on a runner of its own scale set (its demand only shrank)", () => {
    expect(nudgeTargets({ status: "in_progress", scaleSetId: "a", instanceScaleSetId: "a" })).toEqual([]);
    expect(nudgeTargets({ status: "in_progress", scaleSetId: "a", instanceScaleSetId: null })).toEqual([]);
  });

  it("wakes the runner's scale set when a runner of another one takes the job", () => {
    expect(nudgeTargets({ status: "in_progress", scaleSetId: "a", instanceScaleSetId: "b" })).toEqual(["b"]);
    expect(nudgeTargets({ status: "in_progress", scaleSetId: null, instanceScaleSetId: "b" })).toEqual(["b"]);
  });

  it("wakes the job's scale set once, and the runner's too when it differs, for a completed job", () => {
    expect(nudgeTargets({ status: "completed", scaleSetId: "a", instanceScaleSetId: "a" })).toEqual(["a"]);
    expect(nudgeTargets({ status: "completed", scaleSetId: "a", instanceScaleSetId: "b" })).toEqual(["a", "b"]);
    expect(nudgeTargets({ status: "completed", scaleSetId: "a", instanceScaleSetId: null })).toEqual(["a"]);
  });
});
