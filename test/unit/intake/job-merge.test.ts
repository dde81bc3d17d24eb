import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type JobStatus, jobStatuses } from "../../../src/db/jobs/schema";
import { jobEventFrom } from "../../../src/intake/job-event";
import { type JobState, jobMergeRules, mergeJob } from "../../../src/intake/job-merge";
import { WorkflowJobPayload } from "../../../src/intake/payload";
import { exampleFor } from "../../fixtures/webhook-examples";

const stateOf = (action: string, jobId: number, over: Partial<JobState> = {}): JobState => ({
  ...jobEventFrom(WorkflowJobPayload.parse(exampleFor(action, jobId).payload))!,
  source: "webhook",
  entityId: "entity-1",
  scaleSetId: null,
  ...over,
});

const fold = (events: JobState[]) => events.reduce<JobState | null>((s, e) => mergeJob(s, e), null)!;

function permutations<T>(xs: T[]): T[][] {
  if (xs.length <= 1) return [xs];
  return xs.flatMap((x, i) => permutations([...xs.slice(0, i), ...xs.slice(i + 1)]).map((p) => [x, ...p]));
}

describe("mergeJob", () => {
  const queued = stateOf("queued", 289782451);
  const running = stateOf("in_progress", 289782451);
  const done = stateOf("completed", 289782451);

  it("moves status forward only", () => {
    expect(mergeJob(done, queued).status).toBe("completed");
    expect(mergeJob(running, queued).status).toBe("in_progress");
    expect(mergeJob(queued, running).status).toBe("in_progress");
  });

  it("lets a late older event fill gaps but never erase", () => {
    const withoutName = { ...done, workflowName: null };
    const merged = mergeJob(withoutName, queued);
    expect(merged.status).toBe("completed");
    expect(merged.conclusion).toBe("failure");
    expect(merged.runnerName).toBe("GitHub Actions 5");
    expect(merged.workflowName).toBe("CodeQL");
  });

  it("ends every permutation of queued, in_progress and completed (GitHub's examples) in the same state", () => {
    const results = permutations([queued, running, done]).map(fold);
    expect(results).toHaveLength(6);
    for (const r of results) expect(r).toEqual(results[0]);
    expect(results[0]).toMatchObject({
      status: "completed",
      conclusion: "failure",
      runnerName: "GitHub Actions 5",
      runnerId: 5,
      name: "linters",
      startedAt: Date.parse("2021-08-05T10:34:58Z"),
      completedAt: Date.parse("2021-08-05T10:38:16Z"),
    });
  });

  it("is idempotent: a repeated event changes nothing", () => {
    for (const e of [queued, running, done]) {
      const once = fold([queued, e]);
      expect(mergeJob(once, e)).toEqual(once);
    }
  });

  it("keeps the first route and fills a missing one", () => {
    expect(mergeJob({ ...queued, scaleSetId: "a" }, { ...running, scaleSetId: "b" }).scaleSetId).toBe("a");
    expect(mergeJob({ ...queued, scaleSetId: null }, { ...running, scaleSetId: "b" }).scaleSetId).toBe("b");
  });

  it("has a rule for every field of the job", () => {
    // `problem` is set only on a row intake could not take as it came (a scale set API queue item).
    expect(Object.keys(jobMergeRules).sort()).toEqual(Object.keys({ ...queued, problem: null }).sort());
  });

  it("keeps a row's problem through later events, and takes a further-along event's own", () => {
    const flawed = { ...queued, problem: "queue item failed validation: x" };
    expect(mergeJob(flawed, running).problem).toBe("queue item failed validation: x");
    expect(mergeJob(queued, { ...running, problem: "queue item failed validation: y" }).problem).toBe("queue item failed validation: y");
    expect(mergeJob(flawed, { ...running, problem: "queue item failed validation: y" }).problem).toBe("queue item failed validation: y");
  });

  it("ends any order of any deliveries of one job in the same state (property)", () => {
    // One job's true history; each delivery carries a status and, for every other field,
    // either the true value or nothing — as GitHub's deliveries do.
    const truth = fc.record({
      name: fc.string({ minLength: 1 }),
      workflowName: fc.option(fc.string({ minLength: 1 }), { nil: null }),
      conclusion: fc.constantFrom("success", "failure", "cancelled"),
      runnerName: fc.string({ minLength: 1 }),
      runnerId: fc.integer({ min: 1 }),
      queuedAt: fc.integer({ min: 0, max: 1e12 }),
      startedAt: fc.integer({ min: 0, max: 1e12 }),
      completedAt: fc.integer({ min: 0, max: 1e12 }),
      scaleSetId: fc.option(fc.constantFrom("s1"), { nil: null }),
    });
    const delivery = fc.record({
      status: fc.constantFrom<JobStatus>(...jobStatuses),
      present: fc.array(fc.boolean(), { minLength: 8, maxLength: 8 }),
    });
    fc.assert(
      fc.property(truth, fc.array(delivery, { minLength: 1, maxLength: 6 }), fc.infiniteStream(fc.nat()), (t, ds, rand) => {
        const events: JobState[] = ds.map(({ status, present: p }) => {
          const started = status === "in_progress" || status === "completed";
          const completed = status === "completed";
          return {
            ...queued,
            status,
            name: p[0] ? t.name : "",
            workflowName: p[1] ? t.workflowName : null,
            conclusion: completed && p[2] ? t.conclusion : null,
            runnerName: started && p[3] ? t.runnerName : null,
            runnerId: started && p[4] ? t.runnerId : null,
            queuedAt: p[5] ? t.queuedAt : null,
            startedAt: started && p[6] ? t.startedAt : null,
            completedAt: completed && p[7] ? t.completedAt : null,
            scaleSetId: t.scaleSetId,
          };
        });
        const shuffled = [...events];
        const it = rand[Symbol.iterator]();
        for (let i = shuffled.length - 1; i > 0; i--) {
          const j = it.next().value! % (i + 1);
          [shuffled[i], shuffled[j]] = [shuffled[j]!, shuffled[i]!];
        }
        expect(fold(shuffled)).toEqual(fold(events));
      }),
    );
  });
});
