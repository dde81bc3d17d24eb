import { describe, expect, it } from "vitest";
import { jobObservations } from "../../../src/intake/job-durations";
import { HISTOGRAMS } from "../../../src/observability/histograms";

const T0 = Date.parse("2024-05-01T10:00:00Z");
const job = (over: Partial<Parameters<typeof jobObservations>[0]>) => ({
  status: "queued" as const,
  runnerName: null,
  queuedAt: T0,
  startedAt: null,
  completedAt: null,
  ...over,
});

describe("jobObservations", () => {
  it("a job starting on a runner: its queue time, counted on reaching in_progress", () => {
    expect(jobObservations(job({ status: "in_progress", runnerName: "r1", startedAt: T0 + 42_000 }))).toEqual([
      { metric: HISTOGRAMS.jobQueue.name, bucket: 60, seconds: 42, status: "in_progress" },
    ]);
  });

  it("a completed job: its queue time (in case its start was never seen) and its run time, counted on reaching completed", () => {
    expect(
      jobObservations(job({ status: "completed", runnerName: "r1", startedAt: T0 + 5_000, completedAt: T0 + 5_000 + 600_500 })),
    ).toEqual([
      { metric: HISTOGRAMS.jobQueue.name, bucket: 5, seconds: 5, status: "in_progress" },
      { metric: HISTOGRAMS.jobRun.name, bucket: 1200, seconds: 600.5, status: "completed" },
    ]);
  });

  it("nothing for a queued or waiting job, a job no runner took, or a time GitHub did not send", () => {
    expect(jobObservations(job({}))).toEqual([]);
    expect(jobObservations(job({ status: "waiting" }))).toEqual([]);
    // Cancelled while queued: GitHub fills started_at, but nothing waited for a runner or ran.
    expect(jobObservations(job({ status: "completed", startedAt: T0 + 1_000, completedAt: T0 + 1_000 }))).toEqual([]);
    expect(jobObservations(job({ status: "in_progress", runnerName: "r1", queuedAt: null, startedAt: T0 }))).toEqual([]);
    expect(
      jobObservations(job({ status: "completed", runnerName: "r1", startedAt: T0 + 1_000, completedAt: null })).map((o) => o.metric),
    ).toEqual([HISTOGRAMS.jobQueue.name]);
  });
});
