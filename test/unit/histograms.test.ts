import { describe, expect, it } from "vitest";
import {
  bucketFor,
  bucketSql,
  cumulativeHistogram,
  DURATION_BUCKETS,
  durationObservation,
  HISTOGRAMS,
  histogramSeries,
  OVERFLOW_BUCKET,
} from "../../src/observability/histograms";

describe("duration histogram buckets", () => {
  it("run from seconds to hours, ascending", () => {
    expect(DURATION_BUCKETS[0]).toBe(1);
    expect(DURATION_BUCKETS.at(-1)).toBe(14_400);
    expect([...DURATION_BUCKETS].sort((a, b) => a - b)).toEqual([...DURATION_BUCKETS]);
  });

  it("put a duration in the smallest bound at or above it, or the overflow bucket", () => {
    expect(bucketFor(0)).toBe(1);
    expect(bucketFor(1)).toBe(1);
    expect(bucketFor(1.001)).toBe(2);
    expect(bucketFor(45)).toBe(60);
    expect(bucketFor(3600)).toBe(3600);
    expect(bucketFor(14_400)).toBe(14_400);
    expect(bucketFor(14_400.5)).toBe(OVERFLOW_BUCKET);
    expect(bucketFor(7, [5, 10])).toBe(10);
  });

  it("say the same in SQL as in code", () => {
    expect(bucketSql("x", [1, 5])).toBe("CASE WHEN x <= 1 THEN 1 WHEN x <= 5 THEN 5 ELSE -1 END");
    expect(bucketSql("s")).toContain("WHEN s <= 14400 THEN 14400 ELSE -1 END");
  });
});

describe("durationObservation", () => {
  it("measures from one time to another in seconds, never below zero, and nothing without both", () => {
    const m = HISTOGRAMS.jobQueue.name;
    expect(durationObservation(m, 1_000, 8_500)).toEqual({ metric: m, bucket: 10, seconds: 7.5 });
    expect(durationObservation(m, 9_000, 8_000)).toEqual({ metric: m, bucket: 1, seconds: 0 });
    expect(durationObservation(m, null, 8_000)).toBeNull();
    expect(durationObservation(m, 1_000, null)).toBeNull();
    expect(durationObservation(m, Number.NaN, 8_000)).toBeNull();
  });
});

describe("cumulativeHistogram", () => {
  it("adds the rows' own counts up into cumulative buckets, +Inf being the count", () => {
    const h = cumulativeHistogram(
      [
        { bucket: 2, count: 1, sum: 1.5 },
        { bucket: 10, count: 2, sum: 15 },
        { bucket: OVERFLOW_BUCKET, count: 1, sum: 50 },
      ],
      [1, 2, 5, 10, 20],
    );
    expect(h).toEqual({
      buckets: [
        { le: 1, count: 0 },
        { le: 2, count: 1 },
        { le: 5, count: 1 },
        { le: 10, count: 3 },
        { le: 20, count: 3 },
      ],
      count: 4,
      sum: 66.5,
    });
  });

  it("counts a row of a bound no longer listed under the next bound up, or only in +Inf above them all", () => {
    const h = cumulativeHistogram(
      [
        { bucket: 3, count: 2, sum: 5 },
        { bucket: 50, count: 1, sum: 40 },
      ],
      [1, 5, 10],
    );
    expect(h.buckets).toEqual([
      { le: 1, count: 0 },
      { le: 5, count: 2 },
      { le: 10, count: 2 },
    ]);
    expect(h.count).toBe(3);
  });

  it("is all zeros for no rows", () => {
    expect(cumulativeHistogram([], [1, 2])).toEqual({
      buckets: [
        { le: 1, count: 0 },
        { le: 2, count: 0 },
      ],
      count: 0,
      sum: 0,
    });
  });
});

describe("histogramSeries", () => {
  it("gives one cumulative series per scale set of the metric asked for", () => {
    const q = HISTOGRAMS.jobQueue.name;
    const rows = [
      { metric: q, scale_set_id: "a", bucket: 1, count: 1, sum: 0.5 },
      { metric: q, scale_set_id: "a", bucket: 5, count: 1, sum: 4 },
      { metric: HISTOGRAMS.jobRun.name, scale_set_id: "a", bucket: 60, count: 9, sum: 500 },
      { metric: q, scale_set_id: "b", bucket: 5, count: 2, sum: 6 },
    ];
    const series = histogramSeries(rows, q, [1, 5]);
    expect(series).toEqual([
      {
        scaleSetId: "a",
        histogram: {
          buckets: [
            { le: 1, count: 1 },
            { le: 5, count: 2 },
          ],
          count: 2,
          sum: 4.5,
        },
      },
      {
        scaleSetId: "b",
        histogram: {
          buckets: [
            { le: 1, count: 0 },
            { le: 5, count: 2 },
          ],
          count: 2,
          sum: 6,
        },
      },
    ]);
  });
});
