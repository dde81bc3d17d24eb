import { describe, expect, it } from "vitest";
import { pickStaleJobs, staleJobVerdict } from "../../src/scaleset/stale-jobs/stale-jobs";

const MIN = 60_000;
const policy = { staleAfterMs: 10 * MIN, recheckMs: 5 * MIN, perPass: 2 };

describe("stale queued jobs", () => {
  it("picks the oldest jobs past the threshold, a few at a time, not re-asking too soon", () => {
    const now = 100 * MIN;
    const jobs = [
      { seq: 101, id: 1, repository: "o/r", queuedAt: now - 60 * MIN },
      { seq: 102, id: 2, repository: "o/r", queuedAt: now - 30 * MIN },
      { seq: 103, id: 3, repository: "o/r", queuedAt: now - 20 * MIN },
      { seq: 104, id: 4, repository: "o/r", queuedAt: now - 5 * MIN },
    ];
    expect(pickStaleJobs(jobs, new Map(), now, policy).map((j) => j.id)).toEqual([1, 2]);
    expect(pickStaleJobs(jobs, new Map([[1, now - MIN]]), now, policy).map((j) => j.id)).toEqual([2, 3]);
    expect(pickStaleJobs(jobs, new Map([[1, now - 6 * MIN]]), now, policy).map((j) => j.id)).toEqual([1, 2]);
    expect(pickStaleJobs([jobs[3]!], new Map(), now, policy)).toEqual([]);
  });

  it("moves a job forward only on what GitHub says for sure", () => {
    expect(staleJobVerdict({ status: "completed", conclusion: "success" })).toEqual({ status: "completed", conclusion: "success" });
    expect(staleJobVerdict({ status: "in_progress", conclusion: null })).toEqual({ status: "in_progress", conclusion: null });
    expect(staleJobVerdict({ status: "queued", conclusion: null })).toBeNull();
    expect(staleJobVerdict(null)).toBeNull();
  });
});
