import { exports } from "cloudflare:workers";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { SESSION_COOKIE } from "../../src/ui/session";
import { ADMIN_TOKEN, type ApiResponse, api, expectErrorShape } from "./helpers";

// The limits in wrangler.toml.
const LOGIN_ATTEMPTS = 5;
const ADMIN_FAILURES = 30;
const METRICS_TOKEN = "test-metrics-token";

/**
 * A client address no other test (nor an earlier run) used: the binding's counts and this
 * isolate's throttle marks outlive a test.
 */
const freshIp = () => `10.${[0, 0, 0].map(() => Math.floor(Math.random() * 254) + 1).join(".")}`;

/**
 * The binding counts in windows aligned to the clock (60 s here): a sequence that straddled a
 * window's end would start counting again halfway. Start one early enough in a window.
 */
async function earlyInWindow(needMs = 10_000) {
  const left = 60_000 - (Date.now() % 60_000);
  if (left < needMs) await new Promise((r) => setTimeout(r, left + 100));
}

async function login(ip: string | null, token: string, headers: Record<string, string> = {}): Promise<ApiResponse & { cookie: boolean }> {
  const res = await exports.default.fetch(
    new Request("https://edgerunner.test/ui/login", {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", ...(ip && { "cf-connecting-ip": ip }), ...headers },
      body: new URLSearchParams({ token }).toString(),
      redirect: "manual",
    }),
  );
  const text = await res.text();
  let body: any = text;
  try {
    body = JSON.parse(text);
  } catch {
    // an HTML page
  }
  return {
    status: res.status,
    body,
    text,
    headers: res.headers,
    cookie: (res.headers.get("set-cookie") ?? "").includes(`${SESSION_COOKIE}=`),
  };
}

const adminGet = (ip: string, token: string | null) => api.get("/api/v1/providers", { token, headers: { "cf-connecting-ip": ip } });

function expectThrottled(res: ApiResponse, maxRetryAfter = 60) {
  expect(res.status, res.text).toBe(429);
  expectErrorShape(res);
  expect(res.body.code).toBe("rate_limited");
  const retryAfter = Number(res.headers.get("retry-after"));
  expect(retryAfter).toBeGreaterThan(0);
  expect(retryAfter).toBeLessThanOrEqual(maxRetryAfter);
  expect(res.body.details).toEqual({ retry_after_seconds: retryAfter });
}

// A test may first wait up to 10 s for the start of a window (earlyInWindow): more than the
// default 5 s test timeout.
vi.setConfig({ testTimeout: 30_000 });

beforeEach(() => {
  // Failed logins and throttling are logged; keep them off the test output.
  vi.spyOn(console, "log").mockImplementation(() => {});
});
afterEach(() => vi.restoreAllMocks());

describe("dashboard login throttling", () => {
  it(`refuses attempt ${LOGIN_ATTEMPTS + 1} within a minute with 429 and Retry-After, even with the right token`, async () => {
    await earlyInWindow();
    const ip = freshIp();
    for (let i = 0; i < LOGIN_ATTEMPTS; i++) expect((await login(ip, `wrong-${i}`)).status).toBe(401);
    expectThrottled(await login(ip, "wrong-again"));
    // Refused before the token is compared: a right guess now looks exactly like a wrong one.
    const right = await login(ip, ADMIN_TOKEN);
    expectThrottled(right);
    expect(right.cookie).toBe(false);
  });

  it("counts every attempt, the successful ones too", async () => {
    await earlyInWindow();
    const ip = freshIp();
    for (let i = 0; i < LOGIN_ATTEMPTS; i++) expect((await login(ip, ADMIN_TOKEN)).status).toBe(303);
    expectThrottled(await login(ip, ADMIN_TOKEN));
  });

  it("keeps clients apart, and counts an IPv6 client by its /64", async () => {
    await earlyInWindow();
    const [a, b] = [freshIp(), freshIp()];
    for (let i = 0; i <= LOGIN_ATTEMPTS; i++) await login(a, "wrong");
    expect((await login(a, ADMIN_TOKEN)).status).toBe(429);
    const other = await login(b, ADMIN_TOKEN);
    expect(other.status).toBe(303);
    expect(other.cookie).toBe(true);

    const net = `2001:db8:${Math.floor(Math.random() * 0xffff).toString(16)}:1`;
    for (let i = 0; i < LOGIN_ATTEMPTS; i++) expect((await login(`${net}::${(i + 1).toString(16)}`, "wrong")).status).toBe(401);
    expect((await login(`${net}:0:0:0:ffff`, ADMIN_TOKEN)).status).toBe(429);
    expect((await login(`${net}1::1`, ADMIN_TOKEN)).status).toBe(303);
  });

  it("gives a browser the login page back, with the same status and Retry-After", async () => {
    await earlyInWindow();
    const ip = freshIp();
    for (let i = 0; i < LOGIN_ATTEMPTS; i++) await login(ip, "wrong");
    const res = await login(ip, "wrong", { accept: "text/html,application/xhtml+xml,*/*;q=0.8" });
    expect(res.status).toBe(429);
    expect(res.headers.get("content-type")).toContain("text/html");
    expect(res.headers.get("retry-after")).toBe("60");
    expect(res.text).toContain("Too many login attempts");
  });

  it("does not throttle requests that did not come through the edge (no client address)", async () => {
    for (let i = 0; i < LOGIN_ATTEMPTS + 2; i++) expect((await login(null, "wrong")).status).toBe(401);
    expect((await login(null, ADMIN_TOKEN)).status).toBe(303);
  });
});

describe("admin API throttling", () => {
  it(`refuses a client after ${ADMIN_FAILURES} wrong tokens, before comparing its token, and no one else`, async () => {
    await earlyInWindow();
    const [guesser, bystander] = [freshIp(), freshIp()];
    for (let i = 0; i < ADMIN_FAILURES; i++) expect((await adminGet(guesser, `wrong-${i}`)).status).toBe(401);
    expectThrottled(await adminGet(guesser, "wrong-again"));
    // A right guess is refused like a wrong one: the limiter is no oracle.
    expectThrottled(await adminGet(guesser, ADMIN_TOKEN));
    // The metrics token is a bearer token too, throttled with the same count.
    expectThrottled(await api.get("/metrics", { token: METRICS_TOKEN, headers: { "cf-connecting-ip": guesser } }));
    expect((await adminGet(bystander, ADMIN_TOKEN)).status).toBe(200);
    expect((await adminGet(bystander, "wrong")).status).toBe(401);
  });

  it("counts only wrong tokens: a busy correct client and callers without a token are not slowed", async () => {
    await earlyInWindow();
    const ip = freshIp();
    for (let i = 0; i < ADMIN_FAILURES + 5; i++) expect((await adminGet(ip, ADMIN_TOKEN)).status).toBe(200);
    for (let i = 0; i < ADMIN_FAILURES + 5; i++) expect((await adminGet(ip, null)).status).toBe(401);
    for (let i = 0; i < ADMIN_FAILURES; i++) expect((await adminGet(ip, "wrong")).status).toBe(401);
    expect((await adminGet(ip, "wrong")).status).toBe(429);
  });

  it("counts wrong metrics tokens like wrong admin tokens", async () => {
    await earlyInWindow();
    const ip = freshIp();
    const scrape = (token: string) => api.get("/metrics", { token, headers: { "cf-connecting-ip": ip } });
    for (let i = 0; i < ADMIN_FAILURES; i++) expect((await scrape("wrong")).status).toBe(401);
    expectThrottled(await scrape("wrong"));
    expectThrottled(await scrape(METRICS_TOKEN));
    expectThrottled(await adminGet(ip, ADMIN_TOKEN));
  });
});
