import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createPatCredential } from "./github-helpers";
import { api } from "./helpers";
import { createRunners, queueJobs, reconcile, scaleSetWorld } from "./scaleset-world";

// On-boot creates paced to the GitHub budget, and a credential pool minting an entity's runners
// (issue 26). The worker tests' budget is 60,000 points a minute in 1 s windows (vitest.config.ts):
// a credential's learned figure (github_budget.learned_points_per_minute) brings it down to
// production's 810, i.e. 13 points (2 JIT configs) a window: 120 a minute, one every 500 ms.

const SHIM_SECRET = "create-pacing-shim-secret";
const ORIGIN = "https://edgerunner.test";

const setup = (over: Record<string, unknown> = {}) => scaleSetWorld(SHIM_SECRET, { runner_prefix: "cp", max_runners: 200, ...over });

async function entityOf(scaleSetId: string) {
  return (await env.DB.prepare(
    "SELECT e.id AS entity_id, e.credentials_id, c.endpoint_name FROM scale_sets s JOIN entities e ON e.id = s.entity_id JOIN github_credentials c ON c.id = e.credentials_id WHERE s.id = ?",
  )
    .bind(scaleSetId)
    .first<{ entity_id: string; credentials_id: string; endpoint_name: string }>())!;
}

/** The credential's budget as GitHub taught it: `points` a minute (dated ahead, so it does not grow back during the test). */
const learnBudget = (credentialId: string, points: number) =>
  env.DB.prepare(
    `INSERT INTO github_budget (credential_id, window_start, points_used, last_grant, learned_points_per_minute, learned_at) VALUES (?1, 0, 0, 0, ?2, ?3)
     ON CONFLICT(credential_id) DO UPDATE SET learned_points_per_minute = ?2, learned_at = ?3`,
  )
    .bind(credentialId, points, Date.now() + 3_600_000)
    .run();
const forgetBudget = (credentialId: string) => env.DB.prepare("DELETE FROM github_budget WHERE credential_id = ?").bind(credentialId).run();
/** Every reservation in the current window gets nothing: the window another isolate opened is ahead of ours. */
const spendBudget = (credentialId: string) =>
  env.DB.prepare(
    "INSERT INTO github_budget (credential_id, window_start, points_used, last_grant) VALUES (?1, ?2, 0, 0) ON CONFLICT(credential_id) DO UPDATE SET window_start = ?2",
  )
    .bind(credentialId, 4_000_000_000_000)
    .run();

/** Puts the credential in the repository's pool, through the admin API. */
async function joinPool(repoId: string, credentialId: string) {
  const name = (await api.get(`/api/v1/github/credentials/${credentialId}`)).body.name;
  const res = await api.put(`/api/v1/repositories/${repoId}`, { pool_credentials: [name] });
  expect(res.status, res.text).toBe(200);
  expect(res.body.pool_credentials).toEqual([{ id: credentialId, name }]);
}

/** A scale set whose repository's pool holds a second PAT (GitHub login `hubot`). */
async function poolWorld(over: Record<string, unknown> = {}) {
  const s = await setup(over);
  await s.github.seed({ pats: [{ token: "ghp_pool_token", login: "hubot" }] });
  const own = await entityOf(s.scaleSetId);
  const poolCredential = await createPatCredential(own.endpoint_name, "ghp_pool_token");
  await joinPool(s.repoId, poolCredential);
  return { s, own, poolCredential };
}

const fetchRunnerFile = (token: string) =>
  exports.default.fetch(new Request(`${ORIGIN}/api/v1/metadata/credentials/runner`, { headers: { authorization: `Bearer ${token}` } }));

const status = async (scaleSetId: string) => (await api.get(`/api/v1/scalesets/${scaleSetId}`)).body;

const instanceRow = async (name: string) =>
  (await env.DB.prepare("SELECT * FROM instances WHERE name = ?").bind(name).first<Record<string, any>>())!;

describe("on-boot creates paced to the GitHub budget", () => {
  it("creates a burst's machines as fast as the pool mints, not all at once; learns the boot time from the machines", async () => {
    const s = await setup();
    const { credentials_id: credentialId } = await entityOf(s.scaleSetId);
    await learnBudget(credentialId, 810);
    await queueJobs(s.scaleSetId, 100);
    await reconcile(s.scaleSetId);
    const first = await s.shim.machines();
    // What the budget mints over one pass's step (a window, 1 s) past the boot time, plus the first.
    expect(first).toHaveLength(3);
    const shown = await status(s.scaleSetId);
    expect(shown.status.create_pacing).toMatchObject({
      holding_back: true,
      wanted: 97,
      allowed: 0,
      unminted: 3,
      boot_time_ms: 30_000,
      boot_time_source: "default",
      jit_per_minute: 120,
      credentials_usable: 1,
      credentials: 1,
    });
    expect(shown.status.last_reconcile.summary.blocked).toBe("jit_pacing");
    // It comes back for the rest by itself (the pass after the creates held back everything).
    expect(Date.parse(shown.status.create_pacing.next_create_at)).toBeLessThanOrEqual(Date.now() + 2_000);

    // The machines boot and ask: their boot times are learned, and once they are minted the line is clear.
    await forgetBudget(credentialId);
    for (const m of first) expect((await fetchRunnerFile((m.bootstrap as Record<string, any>)["instance-token"])).status).toBe(200);
    const booted = await instanceRow(first[0]!.name);
    expect(booted.booted_at).toBeGreaterThanOrEqual(booted.created_at);
    await reconcile(s.scaleSetId);
    const after = (await status(s.scaleSetId)).status.create_pacing;
    expect(after).toMatchObject({ holding_back: false, boot_time_source: "observed", boot_samples: 3, wanted: 97, allowed: 97 });
    expect(await s.shim.machines()).toHaveLength(100);
  });

  it("stops saying it holds creates back once no more are wanted", async () => {
    const s = await setup();
    await learnBudget((await entityOf(s.scaleSetId)).credentials_id, 810);
    const jobs = await queueJobs(s.scaleSetId, 40);
    expect((await reconcile(s.scaleSetId)).create_pacing).toMatchObject({ holding_back: true });
    // The jobs went elsewhere (cancelled, taken by another runner): nothing is wanted any more.
    await env.DB.prepare(`UPDATE jobs SET status = 'completed' WHERE id IN (${jobs.join(",")})`).run();
    expect((await reconcile(s.scaleSetId)).create_pacing).toMatchObject({ holding_back: false, wanted: 0, next_create_at: null });
  });

  it("holds nothing back for a lone job, a scale set with a boot time set, or a before_create scale set", async () => {
    const s = await setup({ boot_time_seconds: 45 });
    expect((await api.get(`/api/v1/scalesets/${s.scaleSetId}`)).body.boot_time_seconds).toBe(45);
    await learnBudget((await entityOf(s.scaleSetId)).credentials_id, 810);
    await createRunners(s, 1);
    expect((await status(s.scaleSetId)).status.create_pacing).toMatchObject({
      holding_back: false,
      boot_time_ms: 45_000,
      boot_time_source: "setting",
    });
    const bad = await api.put(`/api/v1/scalesets/${s.scaleSetId}`, { boot_time_seconds: 0 });
    expect(bad.status).toBe(400);
    expect(bad.body.details[0].path).toBe("boot_time_seconds");
    const auto = await api.put(`/api/v1/scalesets/${s.scaleSetId}`, { boot_time_seconds: null });
    expect(auto.body.boot_time_seconds).toBeNull();

    // Minted before the create, a JIT config is paid for in the pass (the budget's own cut), not paced.
    const b = await setup({ jit_config_timing: "before_create" });
    await learnBudget((await entityOf(b.scaleSetId)).credentials_id, 60_000);
    await createRunners(b, 20);
    expect((await status(b.scaleSetId)).status.create_pacing).toBeNull();
  });
});

describe("a credential pool", () => {
  it("mints with whichever credential has budget, and removes each runner through the credential that minted it", async () => {
    const { s, own, poolCredential } = await poolWorld();

    // The entity's own credential has nothing left in this window: the pool's other one mints.
    await spendBudget(own.credentials_id);
    await s.github.clearRequests();
    const machines = await createRunners(s, 2);
    for (const m of machines) expect((await fetchRunnerFile(m.token)).status).toBe(200);
    for (const m of machines) expect((await instanceRow(m.name)).jit_credentials_id).toBe(poolCredential);
    const mints = (await s.github.requests()).filter((r) => r.path.endsWith("/generate-jitconfig"));
    expect(mints.map((r) => r.principal)).toEqual(["hubot", "hubot"]);
    expect((await status(s.scaleSetId)).status.create_pacing).toMatchObject({ credentials: 2, credentials_usable: 2 });

    // The first machine is deleted: its runner goes through the credential that minted it.
    await s.github.clearRequests();
    const del = await api.delete(`/api/v1/instances/${machines[0]!.name}`);
    expect(del.status, del.text).toBeLessThan(300);
    await reconcile(s.scaleSetId);
    const removals = (await s.github.requests()).filter((r) => r.method === "DELETE" && /\/actions\/runners\/\d+$/.test(r.path));
    expect(removals.map((r) => r.principal)).toEqual(["hubot"]);
  });

  it("pays a before_create pass's JIT configs from the pool too, each runner minted by the credential that paid", async () => {
    const { s, own, poolCredential } = await poolWorld({ jit_config_timing: "before_create" });
    await spendBudget(own.credentials_id);
    await s.github.clearRequests();
    const machines = await createRunners(s, 3);
    const mints = (await s.github.requests()).filter((r) => r.path.endsWith("/generate-jitconfig"));
    expect(mints.map((r) => r.principal)).toEqual(["hubot", "hubot", "hubot"]);
    for (const m of machines) expect((await instanceRow(m.name)).jit_credentials_id).toBe(poolCredential);
  });

  it("skips a failing credential and counts only usable ones in the pool's rate", async () => {
    const { s, own, poolCredential } = await poolWorld();
    await learnBudget(own.credentials_id, 810);
    await learnBudget(poolCredential, 810);
    await env.DB.prepare(
      "INSERT INTO github_credential_state (credential_id, health, failure_reason, failed_at, updated_at) VALUES (?1, 'failing', 'Bad credentials', ?2, ?2)",
    )
      .bind(poolCredential, Date.now())
      .run();
    await queueJobs(s.scaleSetId, 50);
    await reconcile(s.scaleSetId);
    expect((await status(s.scaleSetId)).status.create_pacing).toMatchObject({ credentials: 2, credentials_usable: 1, jit_per_minute: 120 });
    await env.DB.prepare("DELETE FROM github_credential_state WHERE credential_id = ?").bind(poolCredential).run();
    await reconcile(s.scaleSetId);
    expect((await status(s.scaleSetId)).status.create_pacing).toMatchObject({ credentials_usable: 2, jit_per_minute: 240 });
  });
});
