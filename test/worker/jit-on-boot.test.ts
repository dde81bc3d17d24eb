import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { fromBase64 } from "../../src/crypto/base64url";
import { keyringFor } from "../../src/crypto/keyring";
import { open } from "../../src/crypto/secret-box";
import { secretContext } from "../../src/crypto/secret-contexts";
import { claimJitMint, keepJitClaims } from "../../src/db/runner/jit-mint-store";
import { mintInstanceToken } from "../../src/scaleset/runner/instance-token";
import { type ApiResponse, api, expectRejectedWithoutWrites } from "./helpers";
import { parsePrometheus, value } from "./prometheus-parse";
import { createRunners, reconcile, type ScaleSetWorld, scaleSetWorld } from "./scaleset-world";

// JIT configs minted on boot (jit_config_timing: on_boot, the default for webhook scale sets):
// the object creates machines without calling GitHub; the machine's first credentials fetch
// mints its runner, once, paced by the credential's GitHub budget. JIT_WAIT_SECONDS is 3 in
// the worker tests (vitest.config.ts).

const SHIM_SECRET = "jit-on-boot-shim-secret";
const ORIGIN = "https://edgerunner.test";
const FILES = ["runner", "credentials", "credentials_rsaparams"] as const;

const setup = (over: Record<string, unknown> = {}) => scaleSetWorld(SHIM_SECRET, { runner_prefix: "jb", ...over });

const instanceRow = async (name: string) =>
  (await env.DB.prepare("SELECT * FROM instances WHERE name = ?").bind(name).first<Record<string, any>>())!;

async function fetchAs(token: string, path: string): Promise<ApiResponse & { bytes: Uint8Array }> {
  const res = await exports.default.fetch(new Request(`${ORIGIN}/api/v1${path}`, { headers: { authorization: `Bearer ${token}` } }));
  const bytes = new Uint8Array(await res.arrayBuffer());
  const text = new TextDecoder().decode(bytes);
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // a file or a script
  }
  return { status: res.status, body: body as any, text, headers: res.headers, bytes };
}
const credentials = (token: string, file: (typeof FILES)[number] = "runner") => fetchAs(token, `/metadata/credentials/${file}`);

const jitCalls = async (s: ScaleSetWorld) =>
  (await s.github.requests()).filter((r) => r.method === "POST" && r.path.endsWith("/generate-jitconfig"));

/** The JIT files of the instance, as sealed in D1. */
async function sealedFiles(name: string): Promise<Record<string, string>> {
  const row = await instanceRow(name);
  const encoded = await open(await keyringFor(env), row.jit_config_enc, secretContext.jitConfig(row.id));
  return JSON.parse(new TextDecoder().decode(fromBase64(encoded)));
}

async function credentialOf(scaleSetId: string) {
  return (await env.DB.prepare(
    "SELECT c.id, c.name FROM scale_sets s JOIN entities e ON e.id = s.entity_id JOIN github_credentials c ON c.id = e.credentials_id WHERE s.id = ?",
  )
    .bind(scaleSetId)
    .first<{ id: string; name: string }>())!;
}

/** Every reservation in the current window gets nothing: the window another isolate opened is ahead of ours. */
const spendBudget = (credentialId: string) =>
  env.DB.prepare(
    "INSERT INTO github_budget (credential_id, window_start, points_used, last_grant) VALUES (?1, ?2, 0, 0) ON CONFLICT(credential_id) DO UPDATE SET window_start = ?2",
  )
    .bind(credentialId, 4_000_000_000_000)
    .run();
const refillBudget = (credentialId: string) => env.DB.prepare("DELETE FROM github_budget WHERE credential_id = ?").bind(credentialId).run();

async function metrics() {
  const res = await exports.default.fetch(new Request(`${ORIGIN}/metrics`, { headers: { authorization: "Bearer test-metrics-token" } }));
  return parsePrometheus(await res.text());
}
const budgetWaits = async (credentials: string) => value(await metrics(), "edgerunner_github_budget_waits_total", { credentials }) ?? 0;
const jitWaiting = async (scaleSetId: string) =>
  value(await metrics(), "edgerunner_scaleset_jit_waiting_instances", { scale_set_id: scaleSetId });

describe("JIT configs minted on boot", () => {
  it("is the default for webhook scale sets; the scale set API stays before_create", async () => {
    const s = await setup();
    const view = await api.get(`/api/v1/scalesets/${s.scaleSetId}`);
    expect(view.body.jit_config_timing).toBe("on_boot");
    const provider = view.body.provider_name;
    const base = { provider_name: provider, labels: ["self-hosted"], max_runners: 1, image: "i", flavor: "f" };

    const api1 = await api.post(`/api/v1/repositories/${s.repoId}/scalesets`, { ...base, name: "api-set", intake: "scaleset_api" });
    expect(api1.status, api1.text).toBe(201);
    expect(api1.body.jit_config_timing).toBe("before_create");
    await expectRejectedWithoutWrites(400, () =>
      api.post(`/api/v1/repositories/${s.repoId}/scalesets`, {
        ...base,
        name: "api-lazy",
        intake: "scaleset_api",
        jit_config_timing: "on_boot",
      }),
    );
    await expectRejectedWithoutWrites(400, () => api.put(`/api/v1/scalesets/${api1.body.id}`, { jit_config_timing: "on_boot" }));
    await expectRejectedWithoutWrites(400, () => api.put(`/api/v1/scalesets/${s.scaleSetId}`, { jit_config_timing: "later" }));

    const changed = await api.put(`/api/v1/scalesets/${s.scaleSetId}`, { jit_config_timing: "before_create" });
    expect(changed.status, changed.text).toBe(200);
    expect(changed.body.jit_config_timing).toBe("before_create");
    // Moving a scale set to the scale set API moves its mint into the object.
    const back = await api.put(`/api/v1/scalesets/${s.scaleSetId}`, { jit_config_timing: "on_boot" });
    expect(back.body.jit_config_timing).toBe("on_boot");
    const moved = await api.put(`/api/v1/scalesets/${s.scaleSetId}`, { intake: "scaleset_api" });
    expect(moved.status, moved.text).toBe(200);
    expect(moved.body.jit_config_timing).toBe("before_create");
  });

  it("creates machines without a GitHub call; the first credentials fetch mints once, later fetches read D1", async () => {
    const s = await setup();
    await s.github.clearRequests();
    const [r] = await createRunners(s);
    expect(await jitCalls(s)).toEqual([]);
    const created = await instanceRow(r!.name);
    expect(created).toMatchObject({ status: "running", jit_on_boot: 1, jit_config_enc: null, agent_id: null, jit_claimed_at: null });

    // The machine is a JIT runner all the same: metadata and install script say so.
    expect((await fetchAs(r!.token, "/metadata/runner-metadata")).body).toMatchObject({ jit_config_enabled: true });
    const script = await fetchAs(r!.token, "/metadata/install-script");
    expect(script.text).toContain("JIT_CONFIG='true'");
    expect((await fetchAs(r!.token, "/metadata/runner-registration-token")).status).toBe(404);

    for (const round of [1, 2]) {
      for (const file of FILES) {
        const res = await credentials(r!.token, file);
        expect(res.status, `${round} ${file}: ${res.text}`).toBe(200);
        expect(res.headers.get("content-type")).toBe("application/octet-stream");
        expect(res.bytes).toEqual(fromBase64((await sealedFiles(r!.name))[`.${file}`]!));
      }
    }
    const calls = await jitCalls(s);
    expect(calls).toHaveLength(1);
    expect(calls[0]!.body).toMatchObject({ name: r!.name, labels: ["linux", "self-hosted"] });
    const minted = await instanceRow(r!.name);
    // GitHub's runner id is recorded, so a later removal deletes by an id GitHub gave.
    expect(minted.agent_id).toEqual(expect.any(Number));
    expect(minted.jit_asked_at).toBeGreaterThanOrEqual(created.created_at);
    expect((await s.github.state()).runners.map((runner: { name: string }) => runner.name)).toContain(r!.name);
  });

  it("mints once for concurrent fetches of one machine, and once per machine", async () => {
    const s = await setup();
    const runners = await createRunners(s, 3);
    // GitHub takes its time, so the fetches overlap the mint under way.
    await s.github.fault({ kind: "latency", latency_ms: 300, path: "/generate-jitconfig", times: -1 });
    const answers = await Promise.all(runners.flatMap((r) => [...FILES, ...FILES].map((file) => credentials(r.token, file))));
    expect(answers.map((a) => a.status)).toEqual(Array(18).fill(200));
    const calls = await jitCalls(s);
    expect(calls.map((c) => (c.body as { name: string }).name).sort()).toEqual(runners.map((r) => r.name).sort());
  });

  it("refuses credentials once the runner has reported in (409), minting nothing", async () => {
    const s = await setup();
    const [early, late] = await createRunners(s, 2);
    // Reported idle before ever fetching: nothing at GitHub is minted for it.
    const post = (token: string, status: string) =>
      exports.default.fetch(
        new Request(`${ORIGIN}/api/v1/callbacks/status`, {
          method: "POST",
          headers: { authorization: `Bearer ${token}` },
          body: JSON.stringify({ status, message: status }),
        }),
      );
    expect((await post(early!.token, "installing")).status).toBe(200);
    expect((await credentials(early!.token)).status).toBe(200);
    expect((await post(early!.token, "idle")).status).toBe(200);
    for (const file of FILES) {
      const res = await expectRejectedWithoutWrites(409, () => credentials(early!.token, file));
      expect(res.body.details).toEqual({ runner_status: "idle" });
    }
    expect((await post(late!.token, "idle")).status).toBe(200);
    await expectRejectedWithoutWrites(409, () => credentials(late!.token));
    expect((await jitCalls(s)).map((c) => (c.body as { name: string }).name)).toEqual([early!.name]);
  });

  it("waits in line for the credential's GitHub budget, then mints", async () => {
    const s = await setup();
    const cred = await credentialOf(s.scaleSetId);
    const [r] = await createRunners(s);
    const before = await budgetWaits(cred.name);
    await spendBudget(cred.id);
    const pending = credentials(r!.token);
    // The request is waiting once its wait is counted (/metrics: who waited on the budget).
    while ((await budgetWaits(cred.name)) === before) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(await jitCalls(s)).toEqual([]);
    expect((await instanceRow(r!.name)).jit_claimed_at).toEqual(expect.any(Number));
    // Who is waiting: /metrics and the scale set show the machine in line.
    expect(await jitWaiting(s.scaleSetId)).toBe(1);
    expect((await api.get(`/api/v1/scalesets/${s.scaleSetId}`)).body.jit_waiting_instances).toBe(1);
    await refillBudget(cred.id);
    const res = await pending;
    expect(res.status, res.text).toBe(200);
    expect(await jitCalls(s)).toHaveLength(1);
    expect(await budgetWaits(cred.name)).toBe(before + 1);
    expect(await jitWaiting(s.scaleSetId)).toBe(0);
    expect((await api.get(`/api/v1/scalesets/${s.scaleSetId}`)).body.jit_waiting_instances).toBe(0);
  });

  it("serves machines waiting together from one line: counted once each, each minted once", async () => {
    const s = await setup();
    const cred = await credentialOf(s.scaleSetId);
    const runners = await createRunners(s, 2);
    const before = await budgetWaits(cred.name);
    await spendBudget(cred.id);
    // Each request waits in its own invocation; one of them asks D1 for both, and the other
    // finds its grant in the line (plain data: workerd ties promises to their request).
    const pending = runners.map((r) => credentials(r.token));
    while ((await budgetWaits(cred.name)) < before + 2) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(await jitCalls(s)).toEqual([]);
    await refillBudget(cred.id);
    const answers = await Promise.all(pending);
    expect(answers.map((a) => a.status)).toEqual([200, 200]);
    expect((await jitCalls(s)).map((c) => (c.body as { name: string }).name).sort()).toEqual(runners.map((r) => r.name).sort());
    expect(await budgetWaits(cred.name)).toBe(before + 2);
  });

  it("keeps the claims of a line of waiting machines in one batch, leaving out claims taken over", async () => {
    const s = await setup();
    const runners = await createRunners(s, 3);
    const rows = await Promise.all(runners.map((r) => instanceRow(r.name)));
    for (const row of rows) expect(await claimJitMint(env.DB, { id: row.id, createAttempt: row.create_attempt }, 1_000, 0)).toBe(true);
    // Another request took the second one over.
    await env.DB.prepare("UPDATE instances SET jit_claimed_at = 2000 WHERE id = ?").bind(rows[1]!.id).run();
    // More claims than one statement binds (the rest unknown): one batch of several statements.
    const strangers = Array.from({ length: 60 }, (_, i) => ({ instanceId: `nobody-${i}`, claimedAt: 1_000 }));
    const kept = await keepJitClaims(env.DB, [...strangers, ...rows.map((r) => ({ instanceId: r.id, claimedAt: 1_000 }))], 5_000);
    expect([...kept].sort()).toEqual([rows[0]!.id, rows[2]!.id].sort());
    const after = await Promise.all(runners.map((r) => instanceRow(r.name)));
    expect(after.map((r) => r.jit_asked_at)).toEqual([5_000, 1_000, 5_000]);
  });

  it("answers 503 with Retry-After when the budget stays spent through the wait, and gives the claim back", async () => {
    const s = await setup();
    const cred = await credentialOf(s.scaleSetId);
    const [r] = await createRunners(s);
    await spendBudget(cred.id);
    const res = await credentials(r!.token);
    expect(res.status, res.text).toBe(503);
    expect(res.body).toMatchObject({ code: "unavailable", details: { reason: "github_budget" } });
    expect(Number(res.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(await jitCalls(s)).toEqual([]);
    const row = await instanceRow(r!.name);
    // No claim left behind; the machine's bootstrap clock counts from its ask.
    expect(row).toMatchObject({ jit_claimed_at: null, jit_config_enc: null });
    expect(row.jit_asked_at).toBeGreaterThan(row.created_at);

    await refillBudget(cred.id);
    expect((await credentials(r!.token)).status).toBe(200);
    expect(await jitCalls(s)).toHaveLength(1);
  }, 20_000);

  it("gives the claim back when GitHub refuses the mint (502), so the retry mints", async () => {
    const s = await setup();
    const [r] = await createRunners(s);
    // Failing through all of the GitHub client's retries.
    await s.github.fault({ kind: "server_error", status: 500, path: "/generate-jitconfig", times: -1 });
    const failed = await credentials(r!.token);
    expect(failed.status, failed.text).toBe(502);
    await s.github.clearFaults();
    expect((await instanceRow(r!.name)).jit_claimed_at).toBeNull();
    expect((await credentials(r!.token)).status).toBe(200);
    expect((await instanceRow(r!.name)).jit_config_enc).not.toBeNull();
  });

  it("takes over a claim its request stopped keeping, replacing the runner whose config never reached D1", async () => {
    const s = await setup();
    const [r] = await createRunners(s);
    expect((await credentials(r!.token)).status).toBe(200);
    const lost = (await instanceRow(r!.name)).agent_id;
    // As if the request that minted was cut off after GitHub answered: a claim nobody keeps, no config.
    await env.DB.prepare("UPDATE instances SET jit_config_enc = NULL, agent_id = NULL, jit_claimed_at = 1, jit_asked_at = 1 WHERE name = ?")
      .bind(r!.name)
      .run();
    await s.github.clearRequests();
    const res = await credentials(r!.token);
    expect(res.status, res.text).toBe(200);
    const row = await instanceRow(r!.name);
    expect(row.agent_id).toEqual(expect.any(Number));
    expect(row.agent_id).not.toBe(lost);
    const calls = (await s.github.requests()).filter((q) => q.path.includes("/actions/runners") && q.method !== "GET");
    expect(calls.map((q) => `${q.method} ${q.status}`)).toEqual(["POST 409", `DELETE 204`, "POST 201"]);
    const dotRunner = JSON.parse(new TextDecoder().decode(fromBase64((await sealedFiles(r!.name))[".runner"]!)));
    expect(dotRunner.agentId).toBe(row.agent_id);
  });

  it("a machine deleted while its mint is at GitHub gets 409, and its runner is found by name and removed", async () => {
    const s = await setup();
    const [r] = await createRunners(s);
    await s.github.fault({ kind: "latency", latency_ms: 1_000, path: "/generate-jitconfig", times: 1 });
    const pending = credentials(r!.token);
    while ((await instanceRow(r!.name)).jit_claimed_at === null) await new Promise((resolve) => setTimeout(resolve, 20));
    expect((await api.delete(`/api/v1/instances/${r!.name}`)).status).toBe(202);
    const res = await pending;
    expect(res.status, res.text).toBe(409);
    expect((await instanceRow(r!.name)).jit_config_enc).toBeNull();
    const minted = (await s.github.state()).runners.find((runner: { name: string }) => runner.name === r!.name);
    expect(minted).toBeDefined();
    await reconcile(s.scaleSetId);
    expect((await instanceRow(r!.name)).status).toBe("deleted");
    expect((await s.github.state()).runners.map((runner: { name: string }) => runner.name)).not.toContain(r!.name);
  });

  it("mints nothing for a bad or foreign token (401)", async () => {
    const s = await setup();
    const other = await setup();
    const [r] = await createRunners(s);
    await s.github.clearRequests();
    const foreign = await mintInstanceToken(
      env.INSTANCE_TOKEN_SECRET,
      { instance: r!.name, scaleSetId: other.scaleSetId, createAttempt: 1, bootstrapTimeoutMinutes: 20 },
      Date.now(),
    );
    const forged = await mintInstanceToken(
      "another-secret",
      { instance: r!.name, scaleSetId: s.scaleSetId, createAttempt: 1, bootstrapTimeoutMinutes: 20 },
      Date.now(),
    );
    const retried = await mintInstanceToken(
      env.INSTANCE_TOKEN_SECRET,
      { instance: r!.name, scaleSetId: s.scaleSetId, createAttempt: 2, bootstrapTimeoutMinutes: 20 },
      Date.now(),
    );
    for (const token of [foreign, forged, retried, "not-a-token"]) {
      await expectRejectedWithoutWrites(401, () => credentials(token));
    }
    expect(await jitCalls(s)).toEqual([]);
    expect(await jitCalls(other)).toEqual([]);
  });

  it("deletes a machine that never minted without a GitHub call, and one that did by GitHub's id", async () => {
    const s = await setup();
    const [never, minted] = await createRunners(s, 2);
    expect((await credentials(minted!.token)).status).toBe(200);
    const runnerId = (await instanceRow(minted!.name)).agent_id;
    await s.github.clearRequests();
    for (const r of [never!, minted!]) expect((await api.delete(`/api/v1/instances/${r.name}`)).status).toBe(202);
    await reconcile(s.scaleSetId);
    expect((await instanceRow(never!.name)).status).toBe("deleted");
    expect((await instanceRow(minted!.name)).status).toBe("deleted");
    const runnerCalls = (await s.github.requests()).filter((q) => q.path.includes("/actions/runners"));
    expect(runnerCalls.map((q) => `${q.method} ${q.path}`)).toEqual([`DELETE /repos/octo/app/actions/runners/${runnerId}`]);
    // A deleted machine's token mints nothing either.
    await expectRejectedWithoutWrites(401, () => credentials(never!.token));
  });
});
