import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import {
  GithubCredentialFailingError,
  GithubRateLimitedError,
  GithubSendDeadlineError,
  GithubUnavailableError,
} from "../../src/github/errors";
import { generateJitConfig, listRunners } from "../../src/github/runners";
import type { GithubScope } from "../../src/github/scope";
import { client, createAppCredential, createEndpoint, createPatCredential, newWorld, TestClock } from "./github-helpers";
import { api } from "./helpers";

const repo: GithubScope = { kind: "repository", owner: "octo", repo: "app" };

async function patSetup(token?: string) {
  const world = await newWorld();
  const credentialId = await createPatCredential(await createEndpoint(world), token);
  return { world, credentialId, clock: new TestClock() };
}

const restCalls = async (world: Awaited<ReturnType<typeof newWorld>>) =>
  (await world.requests()).filter((r) => r.path.startsWith("/repos/"));

afterEach(() => {
  vi.restoreAllMocks();
});

describe("rate limits", () => {
  it("waits out retry-after (test time, no real sleeping), then succeeds", async () => {
    const { world, credentialId, clock } = await patSetup();
    await world.fault({ kind: "rate_limit", status: 403, retry_after: 30, path: "/actions/runners" });
    const start = clock.now();
    expect(await listRunners(client(credentialId, clock, { maxWaitMs: 60_000 }), repo)).toEqual([]);
    expect(clock.now() - start).toBeGreaterThanOrEqual(30_000);
    expect(clock.sleeps).toEqual([30_000]);
    expect((await restCalls(world)).map((r) => r.status)).toEqual([403, 200]);
  });

  it("makes every other caller of the credential honour the window, without calling GitHub", async () => {
    const { world, credentialId, clock } = await patSetup();
    await world.fault({ kind: "rate_limit", status: 429, retry_after: 120 });
    // The first caller may not wait that long in place: it learns when to come back.
    const first = await listRunners(client(credentialId, clock, { maxWaitMs: 10_000 }), repo).catch((e) => e);
    expect(first).toBeInstanceOf(GithubRateLimitedError);
    expect(first.retryAt).toBeGreaterThanOrEqual(clock.now() + 120_000);

    // Other isolates (new clients, same D1) do not touch GitHub until the window ends.
    const others = await Promise.all(
      Array.from({ length: 5 }, () => listRunners(client(credentialId, clock, { maxWaitMs: 10_000 }), repo).catch((e) => e)),
    );
    expect(others.every((e) => e instanceof GithubRateLimitedError && e.retryAt === first.retryAt)).toBe(true);
    expect(await restCalls(world)).toHaveLength(1);

    // The admin API shows the wait.
    const view = await api.get(`/api/v1/github/credentials/${credentialId}`);
    expect(Date.parse(view.body.rate_limit.limited_until)).toBe(first.retryAt);

    clock.advance(first.retryAt - clock.now());
    expect(await listRunners(client(credentialId, clock), repo)).toEqual([]);
    expect((await restCalls(world)).map((r) => r.status)).toEqual([429, 200]);
  });

  it("waits until x-ratelimit-reset when the primary limit is exhausted", async () => {
    const { world, credentialId, clock } = await patSetup();
    await world.setNow(clock.now());
    await world.fault({ kind: "rate_limit", status: 403, reset_in: 90 });
    const gh = client(credentialId, clock, { maxWaitMs: 5 * 60_000 });
    await listRunners(gh, repo);
    expect(clock.sleeps).toHaveLength(1);
    // reset is whole seconds, plus a second for clock skew.
    expect(clock.sleeps[0]).toBeGreaterThanOrEqual(90_000);
    expect(clock.sleeps[0]).toBeLessThanOrEqual(93_000);
    expect((await restCalls(world)).map((r) => r.status)).toEqual([403, 200]);
  });

  it("records x-ratelimit-* per credential and shows them in the admin API", async () => {
    const { credentialId, clock } = await patSetup();
    await listRunners(client(credentialId, clock), repo);
    const res = await api.get(`/api/v1/github/credentials/${credentialId}`);
    expect(res.body.health).toEqual({ status: "ok", reason: null, since: null });
    expect(res.body.rate_limit).toMatchObject({ limit: 5000, remaining: 4999, used: 1, resource: "core", limited_until: null });
    expect(Date.parse(res.body.rate_limit.reset_at)).toBeGreaterThan(Date.now());
    const list = await api.get("/api/v1/github/credentials");
    expect(list.body.find((c: { id: string }) => c.id === credentialId).rate_limit.remaining).toBe(4999);
    expect(res.text).not.toContain("ghp_test_token");
  });
});

describe("calls paid for in a GitHub budget window (sendBy)", () => {
  it("sends a call before its deadline, and never one after it: a retry after a secondary limit waits past it", async () => {
    const { world, credentialId, clock } = await patSetup();
    const gh = client(credentialId, clock, { maxWaitMs: 60_000 });
    const input = { name: "paid-1", labels: ["self-hosted"], sendBy: clock.now() + 5_000 };
    expect((await generateJitConfig(gh, repo, input)).runner.name).toBe("paid-1");

    // Refused once with a 30 s wait: the retry would leave long after the window it was paid in.
    await world.fault({ kind: "rate_limit", status: 403, retry_after: 30, path: "/generate-jitconfig", times: 1 });
    const late = await generateJitConfig(gh, repo, { ...input, name: "paid-2", sendBy: clock.now() + 5_000 }).catch((e) => e);
    expect(late).toBeInstanceOf(GithubSendDeadlineError);
    const jit = (await world.requests()).filter((r) => r.path.endsWith("/generate-jitconfig"));
    expect(jit.map((r) => r.status)).toEqual([201, 403]);
  });
});

describe("server errors", () => {
  it("retries 5xx with backoff and succeeds", async () => {
    const { world, credentialId, clock } = await patSetup();
    await world.fault({ kind: "server_error", status: 502, times: 2 });
    expect(await listRunners(client(credentialId, clock), repo)).toEqual([]);
    expect((await restCalls(world)).map((r) => r.status)).toEqual([502, 502, 200]);
    expect(clock.sleeps).toHaveLength(2);
    expect(clock.sleeps[1]!).toBeGreaterThan(clock.sleeps[0]!);
  });

  it("times out a slow answer and retries it", async () => {
    const { world, credentialId, clock } = await patSetup();
    await world.fault({ kind: "latency", latency_ms: 1_500, path: "/actions/runners" });
    expect(await listRunners(client(credentialId, clock, { timeoutMs: 300 }), repo)).toEqual([]);
    expect(clock.sleeps).toHaveLength(1);
    // The fake records the slow request when it finally answers; the client had given up on it.
    await vi.waitFor(async () => expect(await restCalls(world)).toHaveLength(2), { timeout: 5_000, interval: 100 });
  });

  it("gives up after a bounded number of attempts", async () => {
    const { world, credentialId, clock } = await patSetup();
    await world.fault({ kind: "server_error", status: 500, times: -1 });
    const err = await listRunners(client(credentialId, clock, { maxAttempts: 4 }), repo).catch((e) => e);
    expect(err).toBeInstanceOf(GithubUnavailableError);
    expect(err.attempts).toBe(4);
    expect(await restCalls(world)).toHaveLength(4);
  });
});

describe("refused credentials", () => {
  it("marks a PAT failing on 401, stops using it, and clears that when the token is replaced", async () => {
    const { world, credentialId, clock } = await patSetup("ghp_revoked");
    const err = await listRunners(client(credentialId, clock), repo).catch((e) => e);
    expect(err).toBeInstanceOf(GithubCredentialFailingError);

    const view = await api.get(`/api/v1/github/credentials/${credentialId}`);
    expect(view.body.health.status).toBe("failing");
    expect(view.body.health.reason).toMatch(/401 Bad credentials/);
    expect(view.body.health.since).toBeTruthy();

    // Nobody calls GitHub with it again, in this isolate or another.
    await expect(listRunners(client(credentialId, clock), repo)).rejects.toBeInstanceOf(GithubCredentialFailingError);
    expect(await restCalls(world)).toHaveLength(1);

    const put = await api.put(`/api/v1/github/credentials/${credentialId}`, { pat: { oauth2_token: "ghp_test_token" } });
    expect(put.status).toBe(200);
    expect(put.body.health.status).toBe("ok");
    expect(await listRunners(client(credentialId, clock), repo)).toEqual([]);
  });

  it("marks an App failing when GitHub rejects its JWT (wrong key)", async () => {
    const world = await newWorld();
    const other = (await crypto.subtle.generateKey(
      { name: "RSASSA-PKCS1-v1_5", modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]), hash: "SHA-256" },
      true,
      ["sign", "verify"],
    )) as CryptoKeyPair;
    const pkcs8 = new Uint8Array((await crypto.subtle.exportKey("pkcs8", other.privateKey)) as ArrayBuffer);
    const pem = `-----BEGIN PRIVATE KEY-----\n${btoa(String.fromCharCode(...pkcs8)).replace(/(.{64})/g, "$1\n")}\n-----END PRIVATE KEY-----\n`;
    const credentialId = await createAppCredential(await createEndpoint(world), pem);
    const err = await listRunners(client(credentialId, new TestClock()), repo).catch((e) => e);
    expect(err).toBeInstanceOf(GithubCredentialFailingError);
    const reqs = await world.requests();
    expect(reqs.map((r) => [r.path, r.status])).toEqual([["/app/installations/777/access_tokens", 401]]);
    expect((await api.get(`/api/v1/github/credentials/${credentialId}`)).body.health.status).toBe("failing");
  });

  it("marks an App failing when its installation does not exist", async () => {
    const world = await newWorld();
    const credentialId = await createAppCredential(await createEndpoint(world), undefined, 999);
    const err = await listRunners(client(credentialId, new TestClock()), repo).catch((e) => e);
    expect(err).toBeInstanceOf(GithubCredentialFailingError);
    expect(err.reason).toMatch(/installation 999: 404/);
  });

  it("re-mints once when GitHub revokes an installation token early", async () => {
    const world = await newWorld();
    const credentialId = await createAppCredential(await createEndpoint(world));
    const clock = new TestClock();
    await listRunners(client(credentialId, clock), repo);
    await world.fault({ kind: "unauthorized", path: "/actions/runners" });
    expect(await listRunners(client(credentialId, clock), repo)).toEqual([]);
    const reqs = await world.requests();
    expect(reqs.filter((r) => r.path.endsWith("/access_tokens"))).toHaveLength(2);
    expect((await api.get(`/api/v1/github/credentials/${credentialId}`)).body.health.status).toBe("ok");
  });

  it("does not let a call made with the old token mark the replaced credential failing", async () => {
    const { credentialId, clock } = await patSetup("ghp_revoked");
    const stale = client(credentialId, clock);
    await stale.context(); // loaded before the operator fixes the token
    await api.put(`/api/v1/github/credentials/${credentialId}`, { pat: { oauth2_token: "ghp_test_token" } });
    await expect(listRunners(stale, repo)).rejects.toBeInstanceOf(GithubCredentialFailingError);
    expect((await api.get(`/api/v1/github/credentials/${credentialId}`)).body.health.status).toBe("ok");
  });
});

describe("credential changes", () => {
  const stateOf = (id: string) =>
    env.DB.prepare("SELECT token_enc, health FROM github_credential_state WHERE credential_id = ?")
      .bind(id)
      .first<{ token_enc: string | null; health: string }>();

  it("a new App key drops the cached installation token; a description change keeps it", async () => {
    const { appKeyPkcs8 } = await import("./github-helpers");
    const world = await newWorld();
    const credentialId = await createAppCredential(await createEndpoint(world));
    const clock = new TestClock();
    await listRunners(client(credentialId, clock), repo);
    expect((await stateOf(credentialId))?.token_enc).toMatch(/^er1\./);

    await api.put(`/api/v1/github/credentials/${credentialId}`, { description: "renamed" });
    expect((await stateOf(credentialId))?.token_enc).toMatch(/^er1\./);

    await api.put(`/api/v1/github/credentials/${credentialId}`, { app: { private_key: appKeyPkcs8 } });
    expect(await stateOf(credentialId)).toBeNull();
    await listRunners(client(credentialId, clock), repo);
    expect((await world.requests()).filter((r) => r.path.endsWith("/access_tokens"))).toHaveLength(2);
  });

  it("deleting credentials deletes their state", async () => {
    const { credentialId, clock } = await patSetup("ghp_revoked");
    await listRunners(client(credentialId, clock), repo).catch(() => undefined);
    expect((await stateOf(credentialId))?.health).toBe("failing");
    expect((await api.delete(`/api/v1/github/credentials/${credentialId}`)).status).toBe(204);
    expect(await stateOf(credentialId)).toBeNull();
  });
});

describe("logging", () => {
  it("logs one JSON object per GitHub call, without tokens; a call that succeeded at debug", async () => {
    const world = await newWorld();
    const credentialId = await createAppCredential(await createEndpoint(world));
    const lines: string[] = [];
    const infoLines: string[] = [];
    vi.spyOn(console, "log").mockImplementation((...args: unknown[]) => {
      infoLines.push(args.map(String).join(" "));
    });
    vi.spyOn(console, "debug").mockImplementation((...args: unknown[]) => {
      lines.push(args.map(String).join(" "));
    });
    const savedLevel = process.env.LOG_LEVEL;
    process.env.LOG_LEVEL = "debug";
    let jit: Awaited<ReturnType<typeof generateJitConfig>>;
    try {
      jit = await generateJitConfig(
        client(credentialId, new TestClock()),
        { kind: "organization", org: "octo" },
        { name: "log-1", labels: ["x"] },
      );
    } finally {
      vi.restoreAllMocks();
      if (savedLevel === undefined) delete process.env.LOG_LEVEL;
      else process.env.LOG_LEVEL = savedLevel;
    }
    // Nothing failed: nothing at info (a failed call is info, below).
    expect(infoLines.map((l) => JSON.parse(l).event)).not.toContain("github_call");
    const events = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    const calls = events.filter((e) => e.event === "github_call");
    expect(calls.map((c) => c.operation)).toEqual(["create_installation_token", "list_runner_groups", "generate_jit_config"]);
    for (const c of calls) {
      expect(c).toMatchObject({ credential: credentialId, status: expect.any(Number), duration_ms: expect.any(Number) });
      expect(c).toHaveProperty("rate_limit_remaining");
    }
    const state = await env.DB.prepare("SELECT token_enc FROM github_credential_state WHERE credential_id = ?")
      .bind(credentialId)
      .first<{ token_enc: string }>();
    expect(state?.token_enc).toMatch(/^er1\./);
    const text = lines.join("\n");
    expect(text).not.toContain(jit.encodedJitConfig);
    expect(text).not.toMatch(/ghs_[0-9a-f]{10}/);
    expect(text).not.toMatch(/eyJ[\w-]+\.eyJ/); // no JWT
  });

  it("logs a rate-limit answer at info, with its error, and the call that then succeeds at debug", async () => {
    const { world, credentialId, clock } = await patSetup();
    await world.fault({ kind: "rate_limit", status: 403, retry_after: 30, path: "/actions/runners" });
    const info: Record<string, unknown>[] = [];
    const debug: Record<string, unknown>[] = [];
    vi.spyOn(console, "log").mockImplementation((line: unknown) => void info.push(JSON.parse(String(line))));
    vi.spyOn(console, "debug").mockImplementation((line: unknown) => void debug.push(JSON.parse(String(line))));
    const savedLevel = process.env.LOG_LEVEL;
    process.env.LOG_LEVEL = "debug";
    try {
      await listRunners(client(credentialId, clock, { maxWaitMs: 60_000 }), repo);
    } finally {
      vi.restoreAllMocks();
      if (savedLevel === undefined) delete process.env.LOG_LEVEL;
      else process.env.LOG_LEVEL = savedLevel;
    }
    const calls = (lines: Record<string, unknown>[]) =>
      lines.filter((e) => e.event === "github_call").map((e) => [e.operation, e.status, e.error ?? null]);
    expect(calls(info)).toEqual([["list_runners", 403, "HTTP 403"]]);
    expect(calls(debug)).toEqual([["list_runners", 200, null]]);
    expect(info.map((e) => e.event)).toContain("github_rate_limited");
  });
});
