import { describe, expect, it } from "vitest";
import { jobEventFrom } from "../../../src/intake/job-event";
import { WorkflowJobPayload } from "../../../src/intake/payload";
import { clone, exampleFor, ghesWorkflowJobExamples, workflowJobExamples } from "../../fixtures/webhook-examples";

describe("workflow_job payloads", () => {
  it("has GitHub's examples to test with", () => {
    expect(workflowJobExamples.length).toBe(8);
    expect(ghesWorkflowJobExamples.length).toBeGreaterThan(0);
  });

  it.each([...workflowJobExamples, ...ghesWorkflowJobExamples].map((e) => [e.source, e.payload] as const))(
    "reads %s",
    (_source, payload) => {
      const parsed = WorkflowJobPayload.parse(payload);
      const event = jobEventFrom(parsed)!;
      expect(event.id).toBe(payload.workflow_job.id);
      expect(event.labels).toEqual(payload.workflow_job.labels);
      expect(event.repository).toBe(`${payload.repository.owner.login}/${payload.repository.name}`);
      expect(["waiting", "queued", "in_progress", "completed"]).toContain(event.status);
    },
  );

  it("takes runner, start and conclusion only from events that far along", () => {
    const queued = jobEventFrom(WorkflowJobPayload.parse(exampleFor("queued", 289782451).payload))!;
    expect(queued).toMatchObject({ status: "queued", runnerName: null, runnerId: null, startedAt: null, conclusion: null });
    expect(queued.queuedAt).toBe(Date.parse("2021-09-13T02:21:13Z"));

    const running = jobEventFrom(WorkflowJobPayload.parse(exampleFor("in_progress", 289782451).payload))!;
    expect(running).toMatchObject({ status: "in_progress", runnerName: "GitHub Actions 5", runnerId: 5, conclusion: null });
    expect(running.startedAt).toBe(Date.parse("2021-09-13T02:21:13Z"));

    const done = jobEventFrom(WorkflowJobPayload.parse(exampleFor("completed", 289782451).payload))!;
    expect(done).toMatchObject({ status: "completed", conclusion: "failure", runnerName: "GitHub Actions 5" });
    expect(done.completedAt).toBe(Date.parse("2021-08-05T10:38:16Z"));
  });

  it("uses the job's status over the action (a queued delivery for a job waiting on approval)", () => {
    const p = workflowJobExamples.find((e) => e.payload.action === "queued" && e.payload.workflow_job.status === "waiting")!;
    expect(jobEventFrom(WorkflowJobPayload.parse(p.payload))!.status).toBe("waiting");
  });

  it("ignores statuses it does not know", () => {
    const p = clone(exampleFor("queued", 289782451).payload);
    p.action = "requested";
    p.workflow_job.status = "requested";
    expect(jobEventFrom(WorkflowJobPayload.parse(p))).toBeNull();
  });

  it("rejects payloads without the fields intake needs", () => {
    const p = clone(exampleFor("queued", 289782451).payload);
    delete p.workflow_job.labels;
    expect(WorkflowJobPayload.safeParse(p).success).toBe(false);
  });
});
