import { describe, expect, it } from "vitest";
import { pickStaleJobs, staleJobVerdict, suspectedFinished } from "../../src/scaleset/stale-jobs/stale-jobs";

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

describe("running jobs whose completed may be lost", () => {
  const on = (name: string, jobId: number, jobStatus = "in_progress") => ({
    name,
    jobSeq: jobId + 1000,
    jobId,
    jobStatus,
    jobRepository: "o/r",
    jobQueuedAt: jobId * MIN,
  });

  it("suspects a running job whose runner GitHub lists idle or no longer lists; not one whose runner is busy", () => {
    const instances = [on("busy", 1), on("idle", 2), on("gone", 3), on("done", 4, "completed"), { ...on("unlinked", 5), jobSeq: null }];
    const runners = [
      { name: "busy", busy: true },
      { name: "idle", busy: false },
      { name: "done", busy: false },
    ];
    expect(suspectedFinished(instances, runners)).toEqual([
      { seq: 1002, id: 2, repository: "o/r", queuedAt: 2 * MIN },
      { seq: 1003, id: 3, repository: "o/r", queuedAt: 3 * MIN },
    ]);
  });

  it("asks about suspects first, whatever their age, within the same per-pass share and pacing", () => {
    const now = 100 * MIN;
    const stale = [{ seq: 101, id: 1, repository: "o/r", queuedAt: now - 60 * MIN }];
    const suspects = [
      { seq: 107, id: 7, repository: "o/r", queuedAt: now - MIN },
      { seq: 106, id: 6, repository: "o/r", queuedAt: now - 2 * MIN },
    ];
    expect(pickStaleJobs(stale, new Map(), now, policy, suspects).map((j) => j.id)).toEqual([6, 7]);
    expect(pickStaleJobs(stale, new Map([[6, now - MIN]]), now, policy, suspects).map((j) => j.id)).toEqual([7, 1]);
    // One job in both lists is asked about once.
    expect(pickStaleJobs(stale, new Map(), now, { ...policy, perPass: 5 }, [...suspects, stale[0]!]).map((j) => j.id)).toEqual([1, 6, 7]);
  });
});
