/**
 * The fake GitHub's production-like profile: latency by operation, and GitHub's secondary rate
 * limits per credential (points per minute, concurrent requests) answered as GitHub answers them.
 * (In the unit project: plain Node.)
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createWorld, type FakeWorld } from "../fake-github/control-client.ts";
import { GithubLimits } from "../fake-github/profile.ts";
import { type FakeGithub, startFakeGithub } from "../fake-github/server.ts";

let github: FakeGithub;
beforeAll(async () => {
  github = await startFakeGithub();
});
afterAll(() => github.close());

async function world(): Promise<FakeWorld> {
  const w = await createWorld(github.url);
  await w.seed({ repos: ["octo/app"], pats: [{ token: "ghp_a" }, { token: "ghp_b" }] });
  return w;
}

const call = (w: FakeWorld, method: string, path: string, token = "ghp_a", body?: unknown) =>
  fetch(`${w.url}/repos/octo/app/actions/runners${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
let n = 0;
const jit = (w: FakeWorld, token = "ghp_a") =>
  call(w, "POST", "/generate-jitconfig", token, { name: `er-${n++}`, runner_group_id: 1, labels: ["self-hosted"] });

describe("fake GitHub: production profile", () => {
  it("charges 5 points per mutation and 1 per read per credential, and past 900-style limits answers 403 with retry-after", async () => {
    const w = await world();
    await w.setProfile({ secondary: { points_per_minute: 12, max_concurrent: 100 } });
    expect((await jit(w)).status).toBe(201);
    expect((await jit(w)).status).toBe(201);
    const refused = await jit(w);
    expect(refused.status).toBe(403);
    expect(await refused.json()).toMatchObject({ message: expect.stringMatching(/^You have exceeded a secondary rate limit/) });
    const retryAfter = Number(refused.headers.get("retry-after"));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    // The primary limit is not what refused it: its headers say so.
    expect(Number(refused.headers.get("x-ratelimit-remaining"))).toBeGreaterThan(0);
    expect(refused.headers.get("x-ratelimit-resource")).toBe("core");
    // A read (1 point) still fits; another credential has its own budget.
    expect((await call(w, "GET", "")).status).toBe(200);
    expect((await jit(w, "ghp_b")).status).toBe(201);
    const recorded = await w.requests();
    expect(recorded.filter((r) => r.secondary_limit).map((r) => [r.status, r.secondary_limit, r.operation])).toEqual([
      [403, "points", "generate_jit_config"],
    ]);
  });

  it("answers 429 instead when told to, and {} turns the profile off", async () => {
    const w = await world();
    await w.setProfile({ secondary: { points_per_minute: 5, max_concurrent: 100, status: 429 } });
    expect((await jit(w)).status).toBe(201);
    expect((await jit(w)).status).toBe(429);
    await w.setProfile({});
    expect((await jit(w)).status).toBe(201);
  });

  it("refuses a credential's request beyond its concurrent requests, without retry-after, while the others are slow", async () => {
    const w = await world();
    await w.setProfile({ latency: { jit_ms: 400, other_ms: 400, jitter: 0 }, secondary: { points_per_minute: 900, max_concurrent: 1 } });
    const slow = call(w, "GET", "");
    // Once the first one has arrived and waits out its latency, a second one is one too many.
    let second = await call(w, "GET", "");
    for (let i = 0; i < 20 && second.status !== 403; i++) second = await call(w, "GET", "");
    expect(second.status).toBe(403);
    expect(second.headers.get("retry-after")).toBeNull();
    expect((await slow).status).toBe(200);
    const recorded = await w.requests();
    expect(recorded.some((r) => r.secondary_limit === "concurrency" && r.status === 403)).toBe(true);
    // Once it is answered, the next one gets in.
    expect((await call(w, "GET", "")).status).toBe(200);
  });

  it("waits generate-jitconfig's latency for JIT calls and the other latency for the rest, jittered within ± jitter", () => {
    const limits = new GithubLimits({ latency: { jit_ms: 300, other_ms: 100, jitter: 0.2 } });
    expect(limits.latencyMs("generate_jit_config", () => 0.5)).toBe(300);
    expect(limits.latencyMs("list_runners", () => 0.5)).toBe(100);
    expect(limits.latencyMs("generate_jit_config", () => 0)).toBe(240);
    expect(limits.latencyMs("generate_jit_config", () => 1)).toBe(360);
    expect(new GithubLimits({}).latencyMs("generate_jit_config")).toBe(0);
  });

  it("tells a refused request to come back when enough of the oldest points have left the minute", () => {
    const limits = new GithubLimits({ secondary: { points_per_minute: 10, max_concurrent: 100 } });
    expect(limits.enter("k", "POST", 0)).toBeNull();
    limits.leave("k");
    expect(limits.enter("k", "POST", 10_000)).toBeNull();
    limits.leave("k");
    expect(limits.enter("k", "POST", 20_000)).toEqual({ kind: "points", status: 403, retryAfterS: 40 });
    expect(limits.pointsUsed("k", 20_000)).toBe(10);
    // At 60 s the first charge has left the window.
    expect(limits.enter("k", "POST", 60_001)).toBeNull();
  });
});
