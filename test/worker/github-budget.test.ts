import { env, exports } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { reserveJitConfigs } from "../../src/db/budget/github-budget-store";
import { type BudgetRow, type Fairness, type GithubBudgetPolicy, type LearnedBudget, reserve } from "../../src/github/budget/budget";
import { api, inScaleSetObject, seed, unique } from "./helpers";
import { parsePrometheus, value } from "./prometheus-parse";
import { queueJobs, reconcile, type ScaleSetWorld, scaleSetWorld } from "./scaleset-world";

const SHIM_SECRET = "budget-shim-secret-0001";

/**
 * One window from 1970 to 2039 (2^41 ms: exact in binary, so the points come out whole): the
 * test, not the clock, decides when a window is over (`nextWindow`).
 */
const WINDOW_MS = 2 ** 41;
/** A budget of `jit` JIT configs a window. */
const budget = (jit: number): GithubBudgetPolicy => ({ pointsPerMinute: (jit * 5 * 60_000) / WINDOW_MS, windowMs: WINDOW_MS });

const withBudget = (scaleSetId: string, policy: GithubBudgetPolicy) =>
  inScaleSetObject(scaleSetId, (obj) => {
    obj.settings.githubBudget = policy;
  });

async function credentialOf(scaleSetId: string) {
  return (await env.DB.prepare(
    "SELECT c.id, c.name FROM scale_sets s JOIN entities e ON e.id = s.entity_id JOIN github_credentials c ON c.id = e.credentials_id WHERE s.id = ?",
  )
    .bind(scaleSetId)
    .first<{ id: string; name: string }>())!;
}

/**
 * The window is over, as time passing would make it: the credential's reservations and what the
 * scale sets' objects remember of the window move one window into the past.
 */
async function nextWindow(credentialId: string, ...scaleSetIds: string[]) {
  await env.DB.batch(
    ["github_budget", "github_budget_demand"].map((table) =>
      env.DB.prepare(`UPDATE ${table} SET window_start = window_start - ? WHERE credential_id = ?`).bind(WINDOW_MS, credentialId),
    ),
  );
  for (const id of scaleSetIds) {
    await inScaleSetObject(id, (obj) => {
      const wait = obj.state.budgetWait;
      if (wait) obj.state.budgetWait = { ...wait, windowStart: wait.windowStart - WINDOW_MS };
    });
  }
}

const rows = async (scaleSetId: string) =>
  (await env.DB.prepare("SELECT status FROM instances WHERE scale_set_id = ?").bind(scaleSetId).all<{ status: string }>()).results;

const jitCalls = async (w: ScaleSetWorld) =>
  (await w.github.requests()).filter((r) => r.method === "POST" && r.path.endsWith("/generate-jitconfig")).length;

async function budgetWaits(credentials: string) {
  const res = await exports.default.fetch(
    new Request("https://edgerunner.test/metrics", { headers: { authorization: "Bearer test-metrics-token" } }),
  );
  return value(parsePrometheus(await res.text()), "edgerunner_github_budget_waits_total", { credentials });
}

/** The `github_budget_exhausted` log lines written since the spy was set. */
const exhausted = (spy: { mock: { calls: unknown[][] } }) =>
  spy.mock.calls
    .map((call) => String(call[0]))
    .filter((line) => line.includes('"event":"github_budget_exhausted"'))
    .map((line) => JSON.parse(line));

describe("GitHub budget", () => {
  afterEach(() => vi.restoreAllMocks());

  it("creates only what the credential's budget pays for, says so, and creates the rest in later windows", async () => {
    const w = await scaleSetWorld(SHIM_SECRET, { max_runners: 60, jit_config_timing: "before_create" });
    const cred = await credentialOf(w.scaleSetId);
    await withBudget(w.scaleSetId, budget(10));
    await queueJobs(w.scaleSetId, 50);
    const logs = vi.spyOn(console, "log").mockImplementation(() => {});

    const status = await reconcile(w.scaleSetId);
    expect(status.last_reconcile).toMatchObject({
      error: null,
      actions: { create: 10 },
      summary: { blocked: "github_budget", desired: 50 },
    });
    expect(status.github_budget).toEqual({ blocked: true, frees_at: new Date(WINDOW_MS).toISOString(), wanted: 40, granted: 0 });
    // No row for a runner the budget cannot pay for: nothing waits in pending_create or fails.
    expect((await rows(w.scaleSetId)).map((r) => r.status)).toEqual(Array(10).fill("running"));
    expect(await jitCalls(w)).toBe(10);
    expect(await budgetWaits(cred.name)).toBe(1);

    // Again in the same window: nothing more, and the wait is counted once per window.
    await reconcile(w.scaleSetId);
    expect(await rows(w.scaleSetId)).toHaveLength(10);
    expect(await budgetWaits(cred.name)).toBe(1);
    expect(exhausted(logs)).toEqual([
      expect.objectContaining({
        scale_set: w.scaleSetId,
        credential: cred.id,
        wanted: 50,
        granted: 10,
        frees_at: new Date(WINDOW_MS).toISOString(),
      }),
    ]);

    const detail = await api.get(`/api/v1/scalesets/${w.scaleSetId}`);
    expect(detail.status).toBe(200);
    expect(detail.body.status.github_budget).toMatchObject({ blocked: true, frees_at: new Date(WINDOW_MS).toISOString() });

    for (let window = 2; window <= 5; window++) {
      await nextWindow(cred.id, w.scaleSetId);
      await reconcile(w.scaleSetId);
      expect(await rows(w.scaleSetId)).toHaveLength(window * 10);
    }
    expect(await jitCalls(w)).toBe(50);
    expect(await budgetWaits(cred.name)).toBe(4);
    expect(exhausted(logs)).toHaveLength(4);
    const done = await reconcile(w.scaleSetId);
    expect(done.last_reconcile.summary.blocked).toBeNull();
    expect(done.github_budget).toMatchObject({ blocked: false, frees_at: null });
  });

  it("is shared by every scale set on the credential", async () => {
    const a = await scaleSetWorld(SHIM_SECRET, { jit_config_timing: "before_create" });
    const provider = (await api.get(`/api/v1/scalesets/${a.scaleSetId}`)).body.provider_name;
    const created = await api.post(`/api/v1/repositories/${a.repoId}/scalesets`, {
      name: unique("second"),
      provider_name: provider,
      labels: ["self-hosted", "arm"],
      max_runners: 10,
      image: "ubuntu:24.04",
      flavor: "small",
      runner_prefix: "eb",
      jit_config_timing: "before_create",
    });
    expect(created.status, created.text).toBe(201);
    const b = created.body.id as string;
    await withBudget(a.scaleSetId, budget(10));
    await withBudget(b, budget(10));
    await queueJobs(a.scaleSetId, 8);
    await queueJobs(b, 8);

    expect((await reconcile(a.scaleSetId)).last_reconcile).toMatchObject({ actions: { create: 8 }, summary: { blocked: null } });
    const second = await reconcile(b);
    expect(second.last_reconcile).toMatchObject({ actions: { create: 2 }, summary: { blocked: "github_budget" } });
    expect(await rows(b)).toHaveLength(2);

    await nextWindow((await credentialOf(b)).id, a.scaleSetId, b);
    await reconcile(b);
    expect(await rows(b)).toHaveLength(8);
  });

  it("leaves the JIT configs of scale sets that mint on boot to their machines: the object only paces its creates to the budget", async () => {
    const w = await scaleSetWorld(SHIM_SECRET);
    await withBudget(w.scaleSetId, budget(1));
    await queueJobs(w.scaleSetId, 5);
    const status = await reconcile(w.scaleSetId);
    // One JIT config a window: what the budget mints within a boot time and one step, half a window (create-pacing.ts).
    expect(status.last_reconcile).toMatchObject({ actions: { create: 1 }, summary: { blocked: "jit_pacing" } });
    // The pass after it: that machine will keep the budget busy past a boot time, the rest wait.
    expect(status.create_pacing).toMatchObject({ holding_back: true, wanted: 4, allowed: 0, unminted: 1 });
    expect(status.github_budget).toBeNull();
    expect(await jitCalls(w)).toBe(0);
  });

  it("keeps a fair share of the window for another scale set on the credential while one bursts", async () => {
    const burst = await scaleSetWorld(SHIM_SECRET, { max_runners: 60, jit_config_timing: "before_create" });
    const provider = (await api.get(`/api/v1/scalesets/${burst.scaleSetId}`)).body.provider_name;
    const created = await api.post(`/api/v1/repositories/${burst.repoId}/scalesets`, {
      name: unique("small"),
      provider_name: provider,
      labels: ["self-hosted", "arm"],
      max_runners: 10,
      image: "ubuntu:24.04",
      flavor: "small",
      runner_prefix: "es",
      jit_config_timing: "before_create",
    });
    expect(created.status, created.text).toBe(201);
    const small = created.body.id as string;
    const cred = await credentialOf(small);
    await withBudget(burst.scaleSetId, budget(10));
    await withBudget(small, budget(10));
    await queueJobs(burst.scaleSetId, 50);
    await queueJobs(small, 5);

    // The burst's object asks first in every window (it wakes when the window opens).
    expect((await reconcile(burst.scaleSetId)).last_reconcile.actions).toEqual({ create: 10 });
    expect((await reconcile(small)).github_budget).toMatchObject({ blocked: true, wanted: 5, granted: 0 });
    await nextWindow(cred.id, burst.scaleSetId, small);
    // The small one fell short last window: its 5 are kept for it (it starved for the whole burst before).
    expect((await reconcile(burst.scaleSetId)).last_reconcile.actions).toEqual({ create: 5 });
    expect((await reconcile(small)).last_reconcile.actions).toEqual({ create: 5 });
    expect(await rows(small)).toHaveLength(5);
    // Served: the burst has the whole window again.
    await nextWindow(cred.id, burst.scaleSetId, small);
    expect((await reconcile(burst.scaleSetId)).last_reconcile.actions).toEqual({ create: 10 });
    expect(await rows(burst.scaleSetId)).toHaveLength(25);
  });

  it("leaves scale sets without JIT configs alone: their runners cost GitHub nothing when they are created", async () => {
    const w = await scaleSetWorld(SHIM_SECRET, { jit_config_enabled: false });
    await withBudget(w.scaleSetId, budget(1));
    await queueJobs(w.scaleSetId, 5);
    const status = await reconcile(w.scaleSetId);
    expect(status.last_reconcile).toMatchObject({ actions: { create: 5 }, summary: { blocked: null } });
    expect(status.github_budget).toBeNull();
  });
});

/** Deterministic pseudo-random numbers in [0, 1) (mulberry32): a failing case can be replayed. */
function random(seedValue: number) {
  let a = seedValue >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A credential used by three scale sets (rows only: no GitHub is called). */
async function credentialWithScaleSets() {
  const repo = await seed.repository();
  const cred = (await env.DB.prepare("SELECT credentials_id AS id FROM entities WHERE id = ?").bind(repo.id).first<{ id: string }>())!;
  const provider = await seed.provider();
  const scaleSets: string[] = [];
  for (let i = 0; i < 3; i++) scaleSets.push((await seed.scaleSet(`repositories/${repo.id}`, { provider_name: provider.name })).id);
  return { credentialId: cred.id, scaleSets };
}

describe("the reservation statement", () => {
  const policy: GithubBudgetPolicy = { pointsPerMinute: 810, windowMs: 3_000 };

  it("agrees with reserve and fairAllowance, a budget learned from GitHub growing back included", async () => {
    const { credentialId, scaleSets } = await credentialWithScaleSets();
    // Far from any real window, so nothing else touches these rows.
    const base = 1_000 * policy.windowMs;
    for (let scenario = 1; scenario <= 25; scenario++) {
      const rnd = random(scenario);
      const learned: LearnedBudget | null =
        rnd() < 0.2 ? null : { pointsPerMinute: 100 + Math.floor(rnd() * 700), at: base - Math.floor(rnd() * 15 * 60_000) };
      await env.DB.batch([
        env.DB.prepare("DELETE FROM github_budget_demand WHERE credential_id = ?").bind(credentialId),
        env.DB.prepare(
          "INSERT INTO github_budget (credential_id, window_start, points_used, last_grant, learned_points_per_minute, learned_at) VALUES (?1, ?2, 0, 0, ?3, ?4) ON CONFLICT(credential_id) DO UPDATE SET window_start = ?2, points_used = 0, last_grant = 0, learned_points_per_minute = ?3, learned_at = ?4",
        ).bind(credentialId, base - policy.windowMs, learned?.pointsPerMinute ?? null, learned?.at ?? null),
      ]);
      // The model: github/budget/budget.ts's reserve over the asks as github_budget_demand remembers them.
      let row: BudgetRow | null = { windowStart: base - policy.windowMs, pointsUsed: 0, learned };
      const asks = new Map<string, { windowStart: number; wanted: number; granted: number; grantedInWindow: number }>();
      const fairness = (scaleSet: string, windowStart: number): Fairness => ({
        othersShort: [...asks]
          .filter(([id, a]) => id !== scaleSet && a.windowStart >= windowStart - policy.windowMs && a.wanted > a.granted)
          .map(([, a]) => a.wanted - a.granted),
        mine: asks.get(scaleSet)?.windowStart === windowStart ? asks.get(scaleSet)!.grantedInWindow : 0,
      });
      let windowStart = base;
      for (let step = 0; step < 12; step++) {
        if (rnd() < 0.3) windowStart += policy.windowMs * (1 + Math.floor(rnd() * 40));
        const scaleSet = scaleSets[Math.floor(rnd() * scaleSets.length)]!;
        const wanted = Math.floor(rnd() * 12);
        const now = windowStart + Math.floor(rnd() * policy.windowMs);
        const expected = reserve(row, windowStart, wanted, policy, fairness(scaleSet, windowStart), now);
        const got = await reserveJitConfigs(env.DB, {
          credentialId,
          scaleSetId: scaleSet,
          windowStart,
          policy,
          wanted,
          countWaits: 0,
          now,
        });
        expect(got, `scenario ${scenario}, step ${step}`).toEqual({ granted: expected.granted, usable: true });
        row = expected.row;
        const before = asks.get(scaleSet);
        const inWindow = before?.windowStart === windowStart ? before.grantedInWindow : 0;
        asks.set(scaleSet, { windowStart, wanted, granted: expected.granted, grantedInWindow: inWindow + expected.granted });
      }
    }
  });

  it("grants nothing to a credential GitHub refused or that waits out a rate limit, and tells it from an unknown one", async () => {
    const { credentialId, scaleSets } = await credentialWithScaleSets();
    const now = 2_000 * policy.windowMs;
    const ask = (over: { credentialId?: string; countWaits?: number } = {}) =>
      reserveJitConfigs(env.DB, {
        credentialId,
        scaleSetId: scaleSets[0]!,
        windowStart: now,
        policy,
        wanted: 5,
        countWaits: 0,
        now,
        ...over,
      });
    const state = (health: string, blockedUntil: number | null) =>
      env.DB.prepare(
        "INSERT INTO github_credential_state (credential_id, health, blocked_until, updated_at) VALUES (?1, ?2, ?3, 0) ON CONFLICT(credential_id) DO UPDATE SET health = ?2, blocked_until = ?3",
      )
        .bind(credentialId, health, blockedUntil)
        .run();
    const waits = async () =>
      (
        await env.DB.prepare("SELECT value FROM counters WHERE name = ?")
          .bind(`github.budget_waits|${credentialId}`)
          .first<{ value: number }>()
      )?.value ?? 0;

    await state("failing", null);
    expect(await ask({ countWaits: 5 })).toEqual({ granted: 0, usable: false });
    // Not waiting for the budget: no budget wait is counted.
    expect(await waits()).toBe(0);
    await state("ok", now + 1);
    expect(await ask()).toEqual({ granted: 0, usable: false });
    await state("ok", now);
    expect(await ask()).toEqual({ granted: 5, usable: true });
    // An unknown credential is not budgeted: all granted, as before.
    expect(await ask({ credentialId: crypto.randomUUID() })).toEqual({ granted: 5, usable: true });
  });
});
