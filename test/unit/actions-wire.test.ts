/** The Actions service's wire format: BOM stripping, `{typeName, message}` errors, queue messages. */
import { describe, expect, it } from "vitest";
import {
  actionsError,
  decodeBody,
  jwtExpiresAt,
  messageIdFromHead,
  parseBody,
  parseQueueMessage,
  readJobItem,
} from "../../src/github/actions-service/wire";
import { PAYLOAD_BOUNDS } from "../../src/intake/payload";

const bytes = (s: string, bom = false) => new Uint8Array([...(bom ? [0xef, 0xbb, 0xbf] : []), ...new TextEncoder().encode(s)]);

describe("Actions service wire format", () => {
  it("strips one leading UTF-8 BOM, and parses what follows", () => {
    expect(parseBody(bytes('{"a":1}', true))).toEqual({ a: 1 });
    expect(parseBody(bytes('{"a":1}'))).toEqual({ a: 1 });
    expect(decodeBody(bytes("\uFEFFx", true))).toBe("\uFEFFx");
    expect(parseBody(bytes("", true))).toBeUndefined();
    expect(parseBody(bytes("<html>", true))).toBeUndefined();
  });

  it.each([
    [409, { typeName: "GitHub.Actions.Runtime.WebApi.RunnerScaleSetSessionConflictException", message: "x" }, "conflict"],
    [400, { typeName: "GitHub.DistributedTask.WebApi.AgentExistsException" }, "conflict"],
    [400, { typeName: "GitHub.DistributedTask.WebApi.JobStillRunningException" }, "conflict"],
    [400, { typeName: "GitHub.DistributedTask.WebApi.AgentNotFoundException" }, "not_found"],
    [404, { typeName: "GitHub.Actions.Runtime.WebApi.RunnerScaleSetNotFoundException" }, "not_found"],
    [404, null, "not_found"],
    [401, { message: "Bad credentials" }, "unauthorized"],
    [403, undefined, "unauthorized"],
    [409, undefined, "conflict"],
    [500, undefined, "retryable"],
    [503, { typeName: "VssServiceException" }, "retryable"],
    [429, undefined, "retryable"],
    [400, { typeName: "ArgumentException", message: "name is required" }, "permanent"],
    [422, "not an object", "permanent"],
  ] as const)("status %i with %j is %s", (status, body, kind) => {
    const e = actionsError(status, body, "fallback");
    expect(e.kind).toBe(kind);
    expect(e.status).toBe(status);
    expect(e.message).toBe((body && typeof body === "object" && "message" in body && body.message) || "fallback");
  });

  it("reads a message's job items from its string body, skipping types it does not know", () => {
    const body = JSON.stringify([
      {
        messageType: "JobStarted",
        runnerRequestId: 5,
        repositoryName: "app",
        ownerName: "octo",
        jobId: "j",
        runnerId: 9,
        runnerName: "er-1",
        queueTime: "2026-01-01T00:00:00Z",
        finishTime: "0001-01-01T00:00:00Z",
      },
      { messageType: "SomethingNew", runnerRequestId: 6 },
    ]);
    const parsed = parseQueueMessage({
      messageId: 3,
      messageType: "RunnerScaleSetJobMessages",
      body,
      statistics: { totalAssignedJobs: 2 },
    });
    expect(parsed).toMatchObject({ ok: true, value: { messageId: 3, statistics: { totalAssignedJobs: 2, totalAvailableJobs: 0 } } });
    expect(parsed.ok && parsed.value.jobs).toEqual([
      expect.objectContaining({
        type: "JobStarted",
        repository: "octo/app",
        runnerId: 9,
        runnerName: "er-1",
        queueTime: Date.parse("2026-01-01T00:00:00Z"),
        finishTime: null,
        result: null,
      }),
    ]);
    expect(parsed.ok && parsed.value).toMatchObject({ invalid: [], skipped: ["SomethingNew"] });
    expect(parseQueueMessage({ messageId: 4, messageType: "Other", body: "whatever" })).toMatchObject({ ok: true, value: { jobs: [] } });
  });

  it("keeps the id of a message it cannot act on, so it can be acknowledged", () => {
    const job = "RunnerScaleSetJobMessages";
    expect(parseQueueMessage({ messageId: 4, messageType: job, body: "{" })).toEqual({
      ok: false,
      messageId: 4,
      message: "message body is not JSON",
    });
    expect(parseQueueMessage({ messageId: 4, messageType: job, body: "{}" })).toMatchObject({ ok: false, messageId: 4 });
    expect(parseQueueMessage({ messageId: 4, messageType: job, body: 7 })).toMatchObject({ ok: false, messageId: 4 });
    expect(parseQueueMessage({ messageId: 4, messageType: job, body: "[]", statistics: "x" })).toMatchObject({
      ok: false,
      messageId: 4,
      message: expect.stringContaining("statistics"),
    });
    expect(parseQueueMessage({ messageType: job })).toMatchObject({ ok: false, messageId: null });
    expect(parseQueueMessage({ messageId: -1, messageType: job })).toMatchObject({ ok: false, messageId: null });
    expect(parseQueueMessage("nope")).toMatchObject({ ok: false, messageId: null });
  });

  it("keeps a job item that fails its schema, with which fields failed and what of it was readable", () => {
    const r = readJobItem({
      messageType: "JobCompleted",
      runnerRequestId: 77,
      repositoryName: "app",
      ownerName: "octo",
      jobDisplayName: "build",
      workflowRunId: 5,
      requestLabels: Array.from({ length: PAYLOAD_BOUNDS.labels + 1 }, (_, i) => `l${i}`),
      result: 42,
      runnerName: "r".repeat(PAYLOAD_BOUNDS.runnerName + 1),
    });
    expect(r.kind).toBe("invalid");
    if (r.kind !== "invalid") return;
    expect(r.item).toMatchObject({
      type: "JobCompleted",
      runnerRequestId: 77,
      repository: "octo/app",
      jobDisplayName: "build",
      workflowRunId: 5,
      requestLabels: [],
      result: null,
      runnerName: null,
    });
    expect(r.item.problems).toEqual([
      expect.stringMatching(/^requestLabels: Too big/),
      expect.stringMatching(/^runnerName: Too big/),
      expect.stringMatching(/^result: Invalid input/),
    ]);
    // Nothing the item carries is echoed back in its problems.
    expect(r.item.problems.join()).not.toContain("rrrr");
  });

  it("keeps an item whose type or request id failed, without them", () => {
    expect(readJobItem({ messageType: "JobAssigned", runnerRequestId: "55", ownerName: "octo" })).toMatchObject({
      kind: "invalid",
      item: { type: "JobAssigned", runnerRequestId: null, owner: "octo", problems: [expect.stringMatching(/^runnerRequestId: /)] },
    });
    expect(readJobItem({ runnerRequestId: 56 })).toMatchObject({ kind: "invalid", item: { type: null, runnerRequestId: 56 } });
    expect(readJobItem({ messageType: 3, runnerRequestId: 57 })).toMatchObject({ kind: "invalid", item: { type: null } });
    expect(readJobItem("JobAssigned")).toMatchObject({
      kind: "invalid",
      item: { type: null, runnerRequestId: null, problems: ["(item): not an object"] },
    });
    expect(
      readJobItem({ messageType: "JobAssigned", runnerRequestId: 58, repositoryName: "x".repeat(PAYLOAD_BOUNDS.name + 1) }),
    ).toMatchObject({
      kind: "invalid",
      item: { runnerRequestId: 58, repository: "/" },
    });
    // A type it does not know is skipped, not invalid: the service may add some.
    expect(readJobItem({ messageType: "JobCancelledSomeday", runnerRequestId: 59 })).toEqual({
      kind: "unknown",
      type: "JobCancelledSomeday",
    });
  });

  it("finds the id at the head of a message too large to read, and only there", () => {
    const enc = (s: string) => new TextEncoder().encode(s);
    expect(messageIdFromHead(enc('\uFEFF{"messageId":12,"padding":"xxxx'))).toBe(12);
    expect(messageIdFromHead(enc('{ "messageId" : 12 }'))).toBe(12);
    expect(messageIdFromHead(enc('{"messageType":"x","body":"[{\\"messageId\\":3'))).toBeNull();
    expect(messageIdFromHead(enc('{"messageId":"12",'))).toBeNull();
    expect(messageIdFromHead(enc("not json"))).toBeNull();
  });

  it("reads a JWT's expiry without verifying it", () => {
    const enc = (o: object) => Buffer.from(JSON.stringify(o)).toString("base64url");
    expect(jwtExpiresAt(`${enc({ alg: "RS256" })}.${enc({ exp: 1_800_000_000 })}.sig`)).toBe(1_800_000_000_000);
    expect(jwtExpiresAt("not-a-jwt")).toBeNull();
    expect(jwtExpiresAt(`${enc({})}.${enc({ sub: "x" })}.sig`)).toBeNull();
  });
});
