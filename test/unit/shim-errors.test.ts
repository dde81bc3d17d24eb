import { describe, expect, it } from "vitest";
import { classifyShimStatus, classifyTransportError } from "../../src/providers/shim-errors";

describe("shim error classification", () => {
  it.each([
    [200, null],
    [201, null],
    [202, null],
    [204, null],
    [404, "not_found"],
    [409, "duplicate"],
    [400, "permanent"],
    [401, "permanent"],
    [403, "permanent"],
    [405, "permanent"],
    [422, "permanent"],
    [408, "retryable"],
    [429, "retryable"],
    [500, "retryable"],
    [502, "retryable"],
    [503, "retryable"],
    [599, "retryable"],
    [301, "permanent"],
    [302, "permanent"],
    [101, "permanent"],
  ])("status %i is %s", (status, kind) => {
    expect(classifyShimStatus(status)).toBe(kind);
  });

  it("calls a timeout retryable and says how long it waited", () => {
    const timeout = new DOMException("The operation timed out.", "TimeoutError");
    expect(classifyTransportError(timeout, 1500)).toEqual({ kind: "retryable", message: "no answer within 1500 ms" });
  });

  it("calls a connection failure retryable", () => {
    const e = classifyTransportError(new TypeError("fetch failed"), 30_000);
    expect(e.kind).toBe("retryable");
    expect(e.message).toContain("fetch failed");
  });
});
