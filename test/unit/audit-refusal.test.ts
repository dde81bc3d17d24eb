import { describe, expect, it } from "vitest";
import { boundedRefusal, clipUtf8, isRefusal, REFUSAL_LIMITS, refusalSummary } from "../../src/audit/refusal";

const bytes = (s: string) => new TextEncoder().encode(s).length;

describe("what a refused write keeps", () => {
  it("takes every 4xx as refused, and nothing else", () => {
    expect([400, 403, 404, 409, 413, 422, 499].every(isRefusal)).toBe(true);
    expect([200, 201, 204, 303, 399, 500, 502, 503].some(isRefusal)).toBe(false);
  });

  it("cuts text to a number of UTF-8 bytes, never inside a character", () => {
    expect(clipUtf8("short", 16)).toBe("short");
    expect(clipUtf8("x".repeat(16), 16)).toBe("x".repeat(16));
    expect(clipUtf8("x".repeat(17), 16)).toBe(`${"x".repeat(13)}…`);
    for (const unit of ["é", "€", "😀", "\uD800", "a😀"]) {
      for (let max = 0; max <= 24; max++) {
        const text = unit.repeat(40);
        const cut = clipUtf8(text, max);
        expect(bytes(cut), `${unit} ${max}`).toBeLessThanOrEqual(max);
        const kept = cut.replace(/…$/, "");
        expect(text.startsWith(kept)).toBe(true);
        // Never the first half of a surrogate pair.
        expect(/[\uD800-\uDBFF]$/.test(kept) && /^[\uDC00-\uDFFF]/.test(text.slice(kept.length)), `${unit} ${max}`).toBe(false);
      }
    }
    expect(clipUtf8("abc", 2)).toBe("ab");
    expect(clipUtf8("abc", 0)).toBe("");
  });

  it("summarizes an answer as its code and message, in at most the summary's bytes", () => {
    expect(
      refusalSummary({ error: "this read-scoped identity may not do this", code: "forbidden", details: { big: "x".repeat(9_000) } }),
    ).toBe('{"code":"forbidden","error":"this read-scoped identity may not do this"}');
    for (const error of ["m".repeat(5_000), "é".repeat(5_000), "\u0001".repeat(5_000), `${"\\"}"`.repeat(2_000)]) {
      const text = refusalSummary({ code: "invalid_body", error });
      expect(bytes(text)).toBeLessThanOrEqual(REFUSAL_LIMITS.summary);
      expect(JSON.parse(text)).toEqual({ code: "invalid_body", error: expect.stringMatching(/…$/) });
    }
    // Not the API's error shape: nothing of it is kept.
    expect(refusalSummary(undefined)).toBe('{"code":null,"error":null}');
    expect(refusalSummary("x".repeat(1_000))).toBe('{"code":null,"error":null}');
    expect(JSON.parse(refusalSummary({ code: "x".repeat(300), error: 5 }))).toEqual({ code: null, error: null });
  });

  it("bounds the method, route, path and resource a caller chooses", () => {
    const long = "é".repeat(5_000);
    const r = boundedRefusal({ method: "M".repeat(100), route: `/api/v1/${long}`, path: `/api/v1/${long}`, resource: long });
    expect(bytes(r.method)).toBeLessThanOrEqual(REFUSAL_LIMITS.method);
    expect(bytes(r.route)).toBeLessThanOrEqual(REFUSAL_LIMITS.route);
    expect(bytes(r.path)).toBeLessThanOrEqual(REFUSAL_LIMITS.path);
    expect(bytes(r.resource!)).toBeLessThanOrEqual(REFUSAL_LIMITS.resource);
    expect(r.path.startsWith("/api/v1/é")).toBe(true);
    expect(boundedRefusal({ method: "POST", route: "/api/v1/providers", path: "/api/v1/providers", resource: null })).toEqual({
      method: "POST",
      route: "/api/v1/providers",
      path: "/api/v1/providers",
      resource: null,
    });
  });
});
