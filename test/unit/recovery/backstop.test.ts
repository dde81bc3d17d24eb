import { describe, expect, it } from "vitest";
import { jobEventFrom } from "../../../src/intake/job-event";
import { WorkflowJobPayload } from "../../../src/intake/payload";
import { asPayload, type ForgeJob, type HeldJob, planBackstop, reposThisPass, statusOf } from "../../../src/recovery/backstop";

const NOW = Date.parse("2026-12-06T12:00:00Z");
const POLICY = { reposPerPass: 2, confirmsPerPass: 2, settleMs: 60_000 };

const job = (id: number, over: Partial<ForgeJob> = {}): ForgeJob => ({
  id,
  runId: id * 10,
  runAttempt: 1,
  name: `build-${id}`,
  workflowName: "CI",
  repository: "octo/app",
  labels: ["self-hosted", "linux"],
  status: "queued",
  conclusion: null,
  runnerId: null,
  runnerName: null,
  createdAt: "2026-12-06T11:58:00Z",
  startedAt: null,
  completedAt: null,
  ...over,
});
const held = (id: number, over: Partial<HeldJob> = {}): HeldJob => ({
  id,
  runId: id * 10,
  repository: "octo/app",
  status: "queued",
  createdAt: NOW - 10 * 60_000,
  ...over,
});

describe("the backstop's round of repositories", () => {
  it("goes round a few at a time", () => {
    const repos = ["a", "b", "c"];
    expect(reposThisPass(repos, 0, 2)).toEqual({ repos: ["a", "b"], next: 2 });
    expect(reposThisPass(repos, 2, 2)).toEqual({ repos: ["c", "a"], next: 1 });
    expect(reposThisPass(["a"], 5, 2)).toEqual({ repos: ["a"], next: 0 });
    expect(reposThisPass([], 3, 2)).toEqual({ repos: [], next: 0 });
  });
});

describe("what the backstop takes in", () => {
  it("open jobs not held, and held ones the forge shows further along", () => {
    const listing = {
      repository: "octo/app",
      jobs: [job(1), job(2, { status: "in_progress", runnerName: "r-2" }), job(3), job(4, { status: "requested" })],
      openRuns: new Set([10, 20, 30, 40]),
    };
    const plan = planBackstop([listing], [held(2), held(3)], NOW, POLICY);
    expect(plan.take.map((j) => j.id)).toEqual([1, 2]);
    expect(plan.confirm).toEqual([]);
  });

  it("asks one by one about held jobs of a looked-at repository that the open listing no longer shows, oldest first, a few per pass", () => {
    const listing = { repository: "OCTO/app", jobs: [job(1)], openRuns: new Set([10, 70]) };
    const plan = planBackstop(
      [listing],
      [
        held(5, { createdAt: NOW - 5 * 60_000 }),
        held(6, { createdAt: NOW - 9 * 60_000 }),
        held(7),
        held(8, { createdAt: NOW - 30_000 }),
        held(9, { repository: "octo/other" }),
        held(11, { createdAt: NOW - 20 * 60_000 }),
      ],
      NOW,
      POLICY,
    );
    // 7: its run is still open (unchanged, not listed again); 8: younger than the listing may be;
    // 9: its repository was not looked at; the two oldest of the rest.
    expect(plan.confirm.map((h) => h.id)).toEqual([11, 6]);
  });

  it("a status it does not track (requested, pending) is nothing yet", () => {
    expect(statusOf({ status: "pending" })).toBeNull();
    expect(statusOf({ status: "waiting" })).toBe("waiting");
  });

  it("what it takes in reads as a workflow_job payload does", () => {
    const event = jobEventFrom(
      WorkflowJobPayload.parse(
        asPayload(job(1, { status: "in_progress", runnerName: "er-1", runnerId: 44, startedAt: "2026-12-06T11:59:00Z" })),
      ),
    );
    expect(event).toMatchObject({
      id: 1,
      runId: 10,
      repository: "octo/app",
      owner: "octo",
      status: "in_progress",
      runnerName: "er-1",
      runnerId: 44,
      labels: ["self-hosted", "linux"],
      queuedAt: Date.parse("2026-12-06T11:58:00Z"),
      startedAt: Date.parse("2026-12-06T11:59:00Z"),
    });
  });
});
