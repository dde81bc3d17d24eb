import { describe, expect, it } from "vitest";
import { hcloudErrorAnswer, retryAfter } from "../../../shims/hetzner/errors.ts";

const e = (code: string, status: number, extra = {}) => ({ code, status, message: `${code} happened`, ...extra });

describe("Hetzner errors as the coordinator reads them", () => {
  it("retryable: rate limits (Retry-After from RateLimit-Reset), capacity, limits, Hetzner busy; 5xx is 502", () => {
    const now = 1_700_000_000_000;
    expect(retryAfter(e("rate_limit_exceeded", 429, { rateLimitReset: now / 1000 + 42 }), now)).toBe("42");
    expect(retryAfter(e("rate_limit_exceeded", 429, { rateLimitReset: now / 1000 + 9999 }), now)).toBe("300");
    expect(retryAfter(e("rate_limit_exceeded", 429))).toBe("5");
    for (const code of ["resource_unavailable", "placement_error", "resource_limit_exceeded", "unavailable", "locked", "maintenance"])
      expect(hcloudErrorAnswer("create a server", e(code, 403)).status).toBe(503);
    expect(hcloudErrorAnswer("list servers", e("rate_limit_exceeded", 429)).status).toBe(503);
    expect(hcloudErrorAnswer("list servers", e("http_500", 500)).status).toBe(502);
    expect(hcloudErrorAnswer("list servers", e("unreachable", 0)).status).toBe(503);
  });

  it("permanent: the token (saying what to fix), unknown servers, refused input", () => {
    const ro = hcloudErrorAnswer("delete servers", e("token_readonly", 403));
    expect(ro.status).toBe(403);
    expect((ro.body as { error: string }).error).toMatch(/may not delete servers .*needs the Read & Write permission/);
    const bad = hcloudErrorAnswer("list servers", e("unauthorized", 401));
    expect((bad.body as { error: string }).error).toMatch(/set HCLOUD_TOKEN to a valid token of the project/);
    expect(hcloudErrorAnswer("read servers", e("not_found", 404)).status).toBe(404);
    expect(hcloudErrorAnswer("create a server", e("invalid_input", 400), "cannot create r1")).toEqual({
      status: 422,
      body: { error: "cannot create r1: Hetzner Cloud refused create a server (invalid_input: invalid_input happened)" },
      headers: undefined,
    });
  });
});
