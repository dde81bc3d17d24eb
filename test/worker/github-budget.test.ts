import { env, exports } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { GithubBudgetPolicy } from "../../src/github/budget";
import { api, inScaleSetObject, unique } from "./helpers";
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
    // One JIT config a window: what the budget mints within a boot time and one window (create-pacing.ts).
    expect(status.last_reconcile).toMatchObject({ actions: { create: 2 }, summary: { blocked: "jit_pacing" } });
    // The pass after it: the two machines will keep the budget busy past a boot time, the rest wait.
    expect(status.create_pacing).toMatchObject({ holding_back: true, wanted: 3, allowed: 0, unminted: 2 });
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
