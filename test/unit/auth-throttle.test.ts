import { afterEach, describe, expect, it, vi } from "vitest";
import type { Env } from "../../src/env";
import { adminThrottled, clientKey, countAdminFailure, THROTTLE_PERIOD_SECONDS } from "../../src/http/auth-throttle";

describe("clientKey", () => {
  it("is the IPv4 address, or null without one", () => {
    expect(clientKey("203.0.113.7")).toBe("203.0.113.7");
    expect(clientKey(" 203.0.113.7 ")).toBe("203.0.113.7");
    expect(clientKey(undefined)).toBeNull();
    expect(clientKey("")).toBeNull();
  });

  it("is an IPv6 client's /64, however the address is written", () => {
    const key = "2001:db8:1:2::/64";
    for (const ip of ["2001:db8:1:2::1", "2001:0db8:0001:0002:ffff:0:0:9", "2001:DB8:1:2:a:b:c:d", "2001:db8:1:2::"])
      expect(clientKey(ip)).toBe(key);
    expect(clientKey("2001:db8:1:3::1")).toBe("2001:db8:1:3::/64");
    expect(clientKey("::1")).toBe("0:0:0:0::/64");
    expect(clientKey("2001:db8::")).toBe("2001:db8:0:0::/64");
  });

  it("keeps anything it cannot read as it is", () => {
    expect(clientKey("::ffff:203.0.113.7")).toBe("::ffff:203.0.113.7");
    expect(clientKey("1::2::3")).toBe("1::2::3");
    expect(clientKey("zz::1")).toBe("zz::1");
  });
});

describe("admin throttle marks", () => {
  afterEach(() => vi.restoreAllMocks());

  /** A binding that allows `allowed` calls, then refuses, like the real one within one window. */
  function envWithLimiter(allowed: number) {
    let calls = 0;
    const limit = vi.fn(async () => ({ success: ++calls <= allowed }));
    return { env: { ADMIN_AUTH_LIMITER: { limit } } as unknown as Env, limit };
  }

  it("marks a client over the limit until the window ends, so its token is not even looked at", async () => {
    vi.spyOn(console, "log").mockImplementation(() => {});
    const { env, limit } = envWithLimiter(2);
    const t0 = 1_000_000;
    const client = `198.51.100.${Math.floor(Math.random() * 250)}`;
    expect(await countAdminFailure(env, client, t0)).toBeNull();
    expect(await countAdminFailure(env, client, t0)).toBeNull();
    expect(adminThrottled(client, t0)).toBeNull();
    const refusal = await countAdminFailure(env, client, t0);
    expect(refusal).toMatchObject({ status: 429, code: "rate_limited", headers: { "retry-after": String(THROTTLE_PERIOD_SECONDS) } });
    expect(limit).toHaveBeenCalledWith({ key: client });
    expect(adminThrottled(client, t0 + 1_000)).toMatchObject({
      status: 429,
      headers: { "retry-after": String(THROTTLE_PERIOD_SECONDS - 1) },
    });
    expect(adminThrottled("198.51.100.251", t0 + 1_000)).toBeNull();
    expect(adminThrottled(client, t0 + THROTTLE_PERIOD_SECONDS * 1000)).toBeNull();
  });
});
