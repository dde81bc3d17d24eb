import { env, exports } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { readCredentialBudgets, reserveJitConfigs } from "../../src/db/budget/github-budget-store";
import { BUDGET_RECOVERY_MS, type GithubBudgetPolicy } from "../../src/github/budget/budget";
import { GithubRateLimitedError } from "../../src/github/errors";
import { generateJitConfig, listRunners } from "../../src/github/runners";
import type { GithubScope } from "../../src/github/scope";
import { client, createEndpoint, createPatCredential, newWorld, TestClock } from "./github-helpers";
import { api } from "./helpers";
import { parsePrometheus, value } from "./prometheus-parse";

// GitHub answers a secondary-limit 403/429 although the budget let the call through: the
// credential's budget learns (github/budget/budget.ts, learnFromRefusal), once per cluster of refusals,
// and grows back. Time is the tests' own (TestClock); the fake GitHub's clock follows it where its
// secondary limits count.

const repo: GithubScope = { kind: "repository", owner: "octo", repo: "app" };
const policy: GithubBudgetPolicy = { pointsPerMinute: 810, windowMs: 3_000 };
/** The start of a budget window an hour from now: the tests' clock, ahead of anything real. */
const windowAhead = () => Math.ceil((Date.now() + 3_600_000) / policy.windowMs) * policy.windowMs;

async function setup() {
  const world = await newWorld();
  const credentialId = await createPatCredential(await createEndpoint(world));
  return { world, credentialId, clock: new TestClock(windowAhead()) };
}

const budgetOf = async (credentialId: string, now: number, p = policy) =>
  (await readCredentialBudgets(env.DB, [credentialId], now, p)).get(credentialId)!;

const reserveAt = (credentialId: string, now: number, wanted: number) =>
  reserveJitConfigs(env.DB, {
    credentialId,
    scaleSetId: "budget-learning-test",
    windowStart: Math.floor(now / policy.windowMs) * policy.windowMs,
    policy,
    wanted,
    countWaits: 0,
    now,
  });

async function metrics() {
  const res = await exports.default.fetch(
    new Request("https://edgerunner.test/metrics", { headers: { authorization: "Bearer test-metrics-token" } }),
  );
  return parsePrometheus(await res.text());
}

/** The `github_budget_learned` lines logged since the spy was set. */
const learnedLines = (spy: { mock: { calls: unknown[][] } }) =>
  spy.mock.calls
    .map((call) => String(call[0]))
    .filter((line) => line.includes('"event":"github_budget_learned"'))
    .map((line) => JSON.parse(line));

let counter = 0;
const jit = (gh: ReturnType<typeof client>, sendBy?: number) =>
  generateJitConfig(gh, repo, { name: `learn-${Date.now().toString(36)}-${counter++}`, labels: ["self-hosted"], sendBy });

describe("the GitHub budget learns from secondary-limit refusals", () => {
  afterEach(() => vi.restoreAllMocks());

  it("cuts the budget once for refusals that arrive together, grants less, and grows back", async () => {
    const { world, credentialId, clock } = await setup();
    const logs = vi.spyOn(console, "log").mockImplementation(() => {});
    // Four isolates' clients, each with the credential's state loaded before GitHub refused anyone.
    const clients = Array.from({ length: 4 }, () => client(credentialId, clock, { maxWaitMs: 0, budget: policy }));
    for (const gh of clients) await gh.context();
    await world.fault({ kind: "rate_limit", status: 403, retry_after: 30, path: "/generate-jitconfig", times: 4 });

    const answers = await Promise.all(clients.map((gh) => jit(gh).catch((e) => e)));
    expect(answers.every((e) => e instanceof GithubRateLimitedError)).toBe(true);
    expect((await world.requests()).filter((r) => r.status === 403)).toHaveLength(4);
    // Four refusals, one lesson: 810 → 607 points a minute (3/4), logged and counted once.
    expect(learnedLines(logs)).toEqual([
      expect.objectContaining({ credential: credentialId, from_points_per_minute: 810, to_points_per_minute: 607 }),
    ]);
    expect(await budgetOf(credentialId, clock.now())).toEqual({
      configuredPointsPerMinute: 810,
      effectivePointsPerMinute: 607,
      learnedAt: clock.now(),
      usable: false, // waiting out GitHub's retry-after
    });
    const cuts = await env.DB.prepare("SELECT value FROM counters WHERE name = ?").bind(`github.budget_cuts|${credentialId}`).first();
    expect(cuts).toEqual({ value: 1 });

    // Once the wait is over: 6 JIT configs a window (30 points of 607 a minute) instead of 8.
    clock.advance(31_000);
    expect(await reserveAt(credentialId, clock.now(), 20)).toEqual({ granted: 6, usable: true });
    // Growing back 810 / 4 every 10 minutes: the configured 8 a window after that.
    const later = clock.now() + BUDGET_RECOVERY_MS;
    expect(await budgetOf(credentialId, later)).toMatchObject({ effectivePointsPerMinute: 810, usable: true });
    expect(await reserveAt(credentialId, later, 20)).toEqual({ granted: 8, usable: true });

    // A refusal after the lesson's cluster is a new one: cut from what is in force then.
    const next = client(credentialId, clock, { maxWaitMs: 0, budget: policy });
    await world.fault({ kind: "rate_limit", status: 429, retry_after: 5, path: "/generate-jitconfig", times: 1 });
    expect(await jit(next).catch((e) => e)).toBeInstanceOf(GithubRateLimitedError);
    expect(learnedLines(logs)).toHaveLength(2);
    expect(learnedLines(logs)[1]).toMatchObject({ from_points_per_minute: 607 + 10, to_points_per_minute: 462 });
  });

  it("learns nothing from the primary hourly limit, nor when there is no budget", async () => {
    const { world, credentialId, clock } = await setup();
    const logs = vi.spyOn(console, "log").mockImplementation(() => {});
    await world.fault({ kind: "rate_limit", status: 403, reset_in: 90, path: "/actions/runners", times: 1 });
    expect(await listRunners(client(credentialId, clock, { maxWaitMs: 0, budget: policy }), repo).catch((e) => e)).toBeInstanceOf(
      GithubRateLimitedError,
    );
    clock.advance(95_000);
    await world.fault({ kind: "rate_limit", status: 403, retry_after: 5, path: "/actions/runners", times: 1 });
    expect(await listRunners(client(credentialId, clock, { maxWaitMs: 0, budget: null }), repo).catch((e) => e)).toBeInstanceOf(
      GithubRateLimitedError,
    );
    expect(learnedLines(logs)).toEqual([]);
    expect(await budgetOf(credentialId, clock.now())).toMatchObject({ effectivePointsPerMinute: 810, learnedAt: null });
  });

  it("shows the budget in force in the admin API and /metrics", async () => {
    const { world, credentialId, clock } = await setup();
    vi.spyOn(console, "log").mockImplementation(() => {});
    const before = await api.get(`/api/v1/github/credentials/${credentialId}`);
    // The Worker's own budget in the tests: 60,000 points a minute (vitest.config.ts).
    expect(before.body.budget).toEqual({ configured_points_per_minute: 60_000, effective_points_per_minute: 60_000, learned_at: null });

    // The client's default budget is the Worker's: the cut is 3/4 of 60,000. The tests' clock is an
    // hour ahead of the API's, so nothing has grown back yet when the API looks.
    await world.fault({ kind: "rate_limit", status: 403, retry_after: 30, path: "/actions/runners", times: 1 });
    await listRunners(client(credentialId, clock, { maxWaitMs: 0 }), repo).catch(() => {});
    const shown = await api.get(`/api/v1/github/credentials/${credentialId}`);
    expect(shown.body.budget).toEqual({
      configured_points_per_minute: 60_000,
      effective_points_per_minute: 45_000,
      learned_at: new Date(clock.now()).toISOString(),
    });
    const list = await api.get("/api/v1/github/credentials");
    expect(list.body.find((c: { id: string }) => c.id === credentialId).budget).toEqual(shown.body.budget);

    const name = shown.body.name as string;
    const m = await metrics();
    expect(value(m, "edgerunner_github_budget_points_per_minute", { credentials: name })).toBe(45_000);
    expect(value(m, "edgerunner_github_budget_cuts_total", { credentials: name })).toBe(1);
    expect(m.types.get("edgerunner_github_budget_points_per_minute")).toBe("gauge");
    expect(m.types.get("edgerunner_github_budget_cuts_total")).toBe("counter");
  });

  // Some 180 budget windows, each a few requests through workerd: more than the default 20 s on a busy machine.
  it("stops GitHub's refusals when the configured figure is more than GitHub allows", async () => {
    // GitHub allows this credential 450 points a minute; the coordinator believes 810.
    const { world, credentialId, clock } = await setup();
    vi.spyOn(console, "log").mockImplementation(() => {});
    await world.setProfile({ secondary: { points_per_minute: 450, max_concurrent: 100 } });
    const gh = client(credentialId, clock, { maxWaitMs: 0, budget: policy });
    const refusedAt: number[] = [];
    const mintedPerMinute: number[] = [];
    const start = clock.now();
    // Nine minutes of a burst that always wants more, window after window, as the on-boot line asks.
    while (clock.now() < start + 9 * 60_000) {
      const minute = Math.floor((clock.now() - start) / 60_000);
      // Held at the test's clock: its calls land exactly a minute apart, as the fake's limit counts them.
      await world.setNow(clock.now(), { freeze: true });
      const { granted, usable } = await reserveAt(credentialId, clock.now(), 50);
      for (let i = 0; usable && i < granted; i++) {
        const minted = await jit(gh, clock.now() + policy.windowMs).catch((e) => e);
        if (minted instanceof GithubRateLimitedError) {
          refusedAt.push(clock.now() - start);
          break;
        }
        mintedPerMinute[minute] = (mintedPerMinute[minute] ?? 0) + 1;
      }
      clock.advance(policy.windowMs);
    }
    const refusals = (await world.requests()).filter((r) => r.secondary_limit === "points");
    expect(refusals).toHaveLength(refusedAt.length);
    // Refused at first (810 > 450), cut a few times (at 33, 108 and 216 s when this was written),
    // then no refusal for the last four and a half minutes, while the burst goes on at close to
    // GitHub's real pace (80 a minute is 400 points). Without learning: 18 refusals, one or more
    // every minute.
    expect(refusedAt.length).toBeGreaterThan(0);
    expect(refusedAt.length).toBeLessThanOrEqual(3);
    expect(refusedAt.every((t) => t < 4.5 * 60_000)).toBe(true);
    for (const minute of [5, 6, 7, 8]) expect(mintedPerMinute[minute]).toBeGreaterThanOrEqual(60);
    const budget = await budgetOf(credentialId, clock.now());
    expect(budget.effectivePointsPerMinute).toBeLessThan(810);
    expect(budget.learnedAt).not.toBeNull();
  }, 90_000);
});
