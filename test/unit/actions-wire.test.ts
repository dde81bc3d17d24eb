/** The Actions service's wire format: BOM stripping, `{typeName, message}` errors, queue messages. */
import { describe, expect, it } from "vitest";
import { actionsError, decodeBody, jwtExpiresAt, parseBody, parseQueueMessage } from "../../src/github/actions-service/wire";

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
    expect(parseQueueMessage({ messageId: 4, messageType: "Other", body: "whatever" })).toMatchObject({ ok: true, value: { jobs: [] } });
    expect(parseQueueMessage({ messageId: 4, messageType: "RunnerScaleSetJobMessages", body: "{" }).ok).toBe(false);
    expect(parseQueueMessage({ messageId: 4, messageType: "RunnerScaleSetJobMessages", body: "{}" }).ok).toBe(false);
    expect(parseQueueMessage({ messageType: "RunnerScaleSetJobMessages" }).ok).toBe(false);
  });

  it("reads a JWT's expiry without verifying it", () => {
    const enc = (o: object) => Buffer.from(JSON.stringify(o)).toString("base64url");
    expect(jwtExpiresAt(`${enc({ alg: "RS256" })}.${enc({ exp: 1_800_000_000 })}.sig`)).toBe(1_800_000_000_000);
    expect(jwtExpiresAt("not-a-jwt")).toBeNull();
    expect(jwtExpiresAt(`${enc({})}.${enc({ sub: "x" })}.sig`)).toBeNull();
  });
});
