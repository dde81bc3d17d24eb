import { env } from "cloudflare:workers";
import { describe, expect, inject, it } from "vitest";
import { countingD1 } from "../../src/db/counting-d1";
import { readDoctorRows } from "../../src/db/doctor/doctor-queries";
import { runDoctor } from "../../src/doctor/gather/run-doctor";
import type { DoctorCheck, DoctorReport } from "../../src/doctor/report";
import { takeTally } from "../../src/lib/usage-tally";
import type { FakeWorld } from "../fake-github/control-client";
import type { Seed, SeedHookDelivery } from "../fake-github/types";
import { createTenant } from "../fake-shim/control";
import { accessEnv } from "./access-helpers";
import { APP_ID, appKeyPkcs1, createAppCredential, createEndpoint, createPatCredential, newWorld } from "./github-helpers";
import { api, expectErrorShape, seed, unique, usageRow } from "./helpers";
import { login, ui } from "./ui-helpers";

// The setup check against the real pieces: the Worker in workerd with D1 and the scale set
// objects, the fake GitHub (its App installations, hooks and their deliveries) and the fake shim.

const HOOK_URL = "https://edgerunner.test/webhooks/github";
const SHIM_SECRET = "doctor-shim-secret-0001";

interface Setup {
  world: FakeWorld;
  scaleSetId: string;
  entityId: string;
  credentialsId: string;
  providerId: string;
}

/** A repository octo/app with a scale set on a fake shim: PAT or App credentials, our hook or not. */
async function setup(
  opts: {
    auth?: "pat" | "app";
    installationId?: number;
    appWebhookSecret?: string;
    providerSecret?: string;
    installHook?: boolean;
    /** More of the fake GitHub, before anything asks it. */
    world?: Seed;
  } = {},
): Promise<Setup> {
  const world = await newWorld();
  if (opts.world) await world.seed(opts.world);
  const endpoint = await createEndpoint(world);
  const credentialsId =
    opts.auth === "app" ? await createAppCredential(endpoint, appKeyPkcs1, opts.installationId) : await createPatCredential(endpoint);
  if (opts.appWebhookSecret) {
    const res = await api.put(`/api/v1/github/credentials/${credentialsId}`, { app: { webhook_secret: opts.appWebhookSecret } });
    expect(res.status, res.text).toBe(200);
  }
  const credentialsName = (await api.get(`/api/v1/github/credentials/${credentialsId}`)).body.name;
  const repo = await api.post("/api/v1/repositories", {
    owner: "octo",
    name: "app",
    credentials_name: credentialsName,
    webhook_secret: "hook-secret-1",
  });
  expect(repo.status, repo.text).toBe(201);
  const tenant = await createTenant(inject("fakeShimUrl"), { secret: SHIM_SECRET });
  const provider = await seed.provider({ url: tenant.url, secret: opts.providerSecret ?? SHIM_SECRET });
  const ss = await seed.scaleSet(`repositories/${repo.body.id}`, { provider_name: provider.name, name: unique("linux") });
  if (opts.installHook) {
    const hook = await api.post(`/api/v1/repositories/${repo.body.id}/webhook`);
    expect(hook.status, hook.text).toBe(201);
  }
  return { world, scaleSetId: ss.id, entityId: repo.body.id, credentialsId, providerId: provider.id };
}

async function doctor(scaleSetId?: string, token?: string): Promise<DoctorReport> {
  const res = await api.get(`/api/v1/doctor${scaleSetId ? `?scaleset=${scaleSetId}` : ""}`, token ? { token } : {});
  expect(res.status, res.text).toBe(200);
  return res.body;
}

const byId = (r: DoctorReport, id: string): DoctorCheck => {
  const c = r.checks.find((x) => x.id === id);
  if (!c) throw new Error(`no check ${id} in ${r.checks.map((x) => x.id).join(", ")}`);
  return c;
};

/** Seeds a hook of octo/app with our URL and these deliveries at GitHub. */
const seedOurHook = (world: FakeWorld, deliveries: SeedHookDelivery[]) =>
  world.seed({ hooks: [{ scope: "repos/octo/app", url: HOOK_URL, events: ["workflow_job"], content_type: "json", deliveries }] });

describe("GET /api/v1/doctor", () => {
  it("a healthy setup: every link ok, and the report never holds a secret", async () => {
    const s = await setup({ installHook: true });
    const r = await doctor(s.scaleSetId);
    expect(
      r.ok,
      JSON.stringify(
        r.checks.filter((c) => c.status !== "ok"),
        null,
        2,
      ),
    ).toBe(true);
    expect(r.public_url).toBe("https://edgerunner.test");
    for (const id of [
      "config.public_url",
      "config.public_url_reachable",
      "config.encryption_key",
      `credentials.health:${s.credentialsId}`,
      `entity.access:${s.entityId}`,
      `entity.webhook:${s.entityId}`,
      `provider.shim:${s.providerId}`,
      `scaleset.ready:${s.scaleSetId}`,
      `scaleset.runners:${s.scaleSetId}`,
      `scaleset.labels:${s.scaleSetId}`,
    ]) {
      expect(byId(r, id).status, `${id}: ${byId(r, id).summary}`).toBe("ok");
    }
    expect(byId(r, `entity.webhook:${s.entityId}`).summary).toContain("GitHub has made no delivery yet");
    expect(byId(r, `provider.shim:${s.providerId}`).details).toMatchObject({ duration_ms: expect.any(Number), interface_version: "v1" });
    // Limited to one scale set: nothing of the others of this file, no unmatched-jobs line.
    expect(r.checks.some((c) => c.id === "jobs.unmatched")).toBe(false);
    const text = JSON.stringify(r);
    for (const secret of [SHIM_SECRET, "ghp_test_token", "hook-secret-1", env.ADMIN_TOKEN, env.ENCRYPTION_KEY, env.INSTANCE_TOKEN_SECRET]) {
      expect(text).not.toContain(secret);
    }
    // Only reads went to GitHub.
    expect((await s.world.requests()).filter((q) => q.method !== "GET" && q.operation !== "create_hook")).toEqual([]);
  });

  it("an App without Administration write for a repository: fails, naming the permission", async () => {
    const limited = { organization_self_hosted_runners: "write", actions: "read", metadata: "read" };
    const s = await setup({
      auth: "app",
      installationId: 778,
      installHook: true,
      world: { installations: [{ id: 778, app_id: APP_ID, account: "octo", permissions: limited }] },
    });
    const r = await doctor(s.scaleSetId);
    expect(r.ok).toBe(false);
    const access = byId(r, `entity.access:${s.entityId}`);
    expect(access.status).toBe("fail");
    expect(access.summary).toContain("Administration: Read and write");
    expect(access.fix).toContain("Repository permissions → Administration: Read and write");
    expect(byId(r, `credentials.health:${s.credentialsId}`)).toMatchObject({
      status: "ok",
      details: { permissions: { organization_self_hosted_runners: "write" } },
    });
    expect(byId(r, `scaleset.ready:${s.scaleSetId}`).status).toBe("fail");
    expect((await s.world.requests()).some((q) => q.operation === "get_installation" && q.auth === "app")).toBe(true);
  });

  it("a credential pool: each member checked against the entity; one on another account fails, the scale set stays ready", async () => {
    const s = await setup({ installHook: true, world: { installations: [{ id: 779, app_id: APP_ID, account: "someone" }] } });
    const endpoint = (await api.get(`/api/v1/github/credentials/${s.credentialsId}`)).body.endpoint;
    const [elsewhere, fine] = [await createAppCredential(endpoint, appKeyPkcs1, 779), await createPatCredential(endpoint)];
    const names = await Promise.all([elsewhere, fine].map(async (id) => (await api.get(`/api/v1/github/credentials/${id}`)).body.name));
    const pooled = await api.put(`/api/v1/repositories/${s.entityId}`, { pool_credentials: names });
    expect(pooled.status, pooled.text).toBe(200);

    const r = await doctor(s.scaleSetId);
    const bad = byId(r, `entity.pool:${s.entityId}:${elsewhere}`);
    expect(bad.status).toBe("fail");
    expect(bad.summary).toContain("Installation 779 is on someone, not octo.");
    expect(bad.fix).toContain(`edgerunner repo update octo/app --pool-credentials <the others, comma-separated>`);
    expect(byId(r, `entity.pool:${s.entityId}:${fine}`)).toMatchObject({ status: "ok", details: { credentials: names[1] } });
    // Limited to the scale set, the report still checks the pool's credentials themselves.
    expect(byId(r, `credentials.health:${fine}`).summary).toContain("Used by 1 entity.");
    expect(byId(r, `scaleset.ready:${s.scaleSetId}`).status).toBe("ok");
    expect(r.ok).toBe(false);
    // The member on the other account read the entity's runners with its own installation's token.
    const reads = (await s.world.requests()).filter((q) => q.operation === "list_runners" && q.path === "/repos/octo/app/actions/runners");
    expect(reads.map((q) => [q.auth, q.principal])).toContainEqual(["installation", "779"]);
  });

  it("a provider with the wrong secret: fails, saying the shim and the coordinator disagree", async () => {
    const s = await setup({ providerSecret: "not-the-shims-secret-01", installHook: true });
    const r = await doctor(s.scaleSetId);
    const shim = byId(r, `provider.shim:${s.providerId}`);
    expect(shim.status).toBe("fail");
    expect(shim.summary).toContain("401");
    expect(shim.fix).toMatch(/disagree on the secret: edgerunner provider update \S+ --secret-from-file/);
    expect(byId(r, `scaleset.ready:${s.scaleSetId}`).status).toBe("fail");
    expect(r.ok).toBe(false);
  });

  it("a hook whose last delivery GitHub saw refused: fails with the command that re-syncs the secret", async () => {
    const s = await setup();
    await seedOurHook(s.world, [
      { status_code: 200, delivered_at: "2026-01-01T10:00:00Z" },
      { status_code: 401, delivered_at: "2026-01-01T11:00:00Z" },
    ]);
    const r = await doctor(s.scaleSetId);
    const hook = byId(r, `entity.webhook:${s.entityId}`);
    expect(hook.status).toBe("fail");
    expect(hook.summary).toContain("refused with 401");
    expect(hook.fix).toContain("edgerunner repo webhook install octo/app");
    expect(hook.details).toMatchObject({ last_delivery: { statusCode: 401 } });
  });

  it("a last delivery that got no answer, and no hook at all: each fails its own way", async () => {
    const unreachable = await setup();
    await seedOurHook(unreachable.world, [{ status_code: 0 }]);
    expect(byId(await doctor(unreachable.scaleSetId), `entity.webhook:${unreachable.entityId}`).fix).toContain("could not reach");
    const none = await setup();
    const r = await doctor(none.scaleSetId);
    expect(byId(r, `entity.webhook:${none.entityId}`)).toMatchObject({ status: "fail", fix: "edgerunner repo webhook install octo/app" });
  });

  it("the App's own webhook: GitHub's settings and last delivery, checked once at the credentials", async () => {
    const s = await setup({ auth: "app", appWebhookSecret: "app-hook-secret-1" });
    await s.world.seed({ app_hooks: [{ app_id: APP_ID, url: HOOK_URL, deliveries: [{ status_code: 200 }] }] });
    const r = await doctor(s.scaleSetId);
    expect(byId(r, `credentials.app_webhook:${s.credentialsId}`)).toMatchObject({ status: "ok" });
    expect(byId(r, `entity.webhook:${s.entityId}`).summary).toContain(`Fed by App ${APP_ID}'s webhook`);
    expect(JSON.stringify(r)).not.toContain("app-hook-secret-1");

    await s.world.seed({ app_hooks: [{ app_id: APP_ID, url: "https://old.example.com/hook" }] });
    const moved = await doctor(s.scaleSetId);
    expect(byId(moved, `credentials.app_webhook:${s.credentialsId}`)).toMatchObject({
      status: "fail",
      fix: expect.stringContaining(HOOK_URL),
    });
    expect(byId(moved, `entity.webhook:${s.entityId}`).status).toBe("fail");
  });

  it("GitHub failing or refusing the credentials: the report still comes, saying so", async () => {
    const s = await setup({ installHook: true });
    await s.world.fault({ kind: "server_error", status: 502, times: -1 });
    const down = await doctor(s.scaleSetId);
    expect(byId(down, `entity.access:${s.entityId}`)).toMatchObject({ status: "fail", summary: expect.stringContaining("no answer") });
    await s.world.clearFaults();
    await s.world.fault({ kind: "unauthorized", times: -1 });
    const refused = await doctor(s.scaleSetId);
    expect(byId(refused, `entity.access:${s.entityId}`).status).toBe("fail");
    // GitHub's 401 marked them failing, as any call would: the next report says so at the credentials.
    const after = await doctor(s.scaleSetId);
    expect(byId(after, `credentials.health:${s.credentialsId}`)).toMatchObject({
      status: "fail",
      fix: expect.stringContaining("--token-from-stdin"),
    });
    expect(byId(after, `entity.access:${s.entityId}`).status).toBe("skip");
  });

  it("the whole report: every scale set, and the queued jobs none took", async () => {
    const s = await setup({ installHook: true });
    const r = await doctor();
    expect(r.checks.some((c) => c.id === `scaleset.ready:${s.scaleSetId}`)).toBe(true);
    expect(byId(r, "jobs.unmatched").status).toMatch(/ok|warn/);
  });

  it("this month's usage, read in the same D1 batch, against the plan the deployment says it is on", async () => {
    const today = new Date().toISOString().slice(0, 10);
    await env.DB.prepare("DELETE FROM usage_days").run();
    takeTally();
    await env.DB.batch(
      (
        [
          ["reconcile", 60_000],
          ["webhook", 25_000],
        ] as const
      ).map(([kind, value]) => usageRow(today, "d1_rows_written", kind, value)),
    );
    // On the Free plan, 85,000 of the 100,000 D1 rows written a day: a warning, with the cause.
    const free = byId((await runDoctor({ ...env, CLOUDFLARE_PLAN: "free" } as typeof env, {}))!, "cloudflare.usage");
    expect(free.status).toBe("warn");
    expect(free.summary).toMatch(/^Near the Free plan's daily limits: D1 rows written: .*today 85,0\d\d \(85 %\)\.$/);
    expect(free.fix).toMatch(/^D1 rows written are mostly reconcile \(70 % of the month's\); see docs\/performance\.md#what-it-costs/);
    // On Workers Paid (the default): the bill so far, never a warning.
    const paid = byId((await runDoctor(env, {}))!, "cloudflare.usage");
    expect(paid.status).toBe("ok");
    expect(paid.summary).toContain("this month's bill so far is $5.00 ($5.00 base + $0.00 beyond the included amounts)");
    // The account's, not a scale set's: not in a report limited to one.
    const s = await setup({ installHook: true });
    expect((await doctor(s.scaleSetId)).checks.some((c) => c.id === "cloudflare.usage")).toBe(false);
    // Still one D1 round trip for everything registered and the month's usage.
    const counted = { n: 0, statements: 0 };
    const rows = await readDoctorRows(countingD1(env.DB, counted));
    expect(counted).toEqual({ n: 1, statements: 12 });
    expect(rows.usage.filter((r) => r.unit === "d1_rows_written" && r.day === today).length).toBeGreaterThanOrEqual(2);
  });

  it("Cloudflare Access: the team's keys are fetched; a wrong certs URL fails", async () => {
    const on = await runDoctor(accessEnv(), { requestUrl: "https://edgerunner.test/api/v1/doctor" });
    expect(byId(on!, "config.access")).toMatchObject({ status: "ok", summary: expect.stringContaining("1 signing key") });
    const wrong = await runDoctor(accessEnv({ ACCESS_CERTS_URL: `${inject("accessCertsUrl")}/missing` }), {});
    expect(byId(wrong!, "config.access")).toMatchObject({ status: "fail", summary: expect.stringContaining("answered 404") });
    const half = await runDoctor({ ...env, ACCESS_TEAM_DOMAIN: "myteam" } as typeof env, {});
    expect(byId(half!, "config.access").status).toBe("fail");
  });

  it("a read token may run it; no token, a bad scale set id or an unknown one are refused", async () => {
    const token = await api.post("/api/v1/tokens", { name: unique("reader"), scope: "read" });
    expect(token.status, token.text).toBe(201);
    const s = await setup({ installHook: true });
    expect((await doctor(s.scaleSetId, token.body.token)).ok).toBe(true);
    const anonymous = await api.get("/api/v1/doctor", { token: null });
    expect(anonymous.status).toBe(401);
    const bad = await api.get("/api/v1/doctor?scaleset=nope");
    expect([bad.status, bad.body.code]).toEqual([400, "invalid_parameter"]);
    expectErrorShape(bad);
    const unknown = await api.get(`/api/v1/doctor?scaleset=${crypto.randomUUID()}`);
    expect(unknown.status).toBe(404);
    expectErrorShape(unknown);
  });

  it("is in the OpenAPI document", async () => {
    const doc = (await api.get("/api/v1/openapi.json", { token: null })).body;
    expect(doc.paths["/api/v1/doctor"].get.responses["200"].content["application/json"].schema.$ref).toBe(
      "#/components/schemas/DoctorReport",
    );
    expect(Object.keys(doc.components.schemas)).toEqual(expect.arrayContaining(["DoctorReport", "DoctorCheck"]));
  });
});

describe("/ui/doctor", () => {
  it("shows the report to a signed-in user, linked from every page; none without a session", async () => {
    const s = await setup({ providerSecret: "not-the-shims-secret-02", installHook: true });
    const { cookie } = await login();
    const page = await ui("GET", `/ui/doctor?scaleset=${s.scaleSetId}`, { cookie: cookie! });
    expect(page.status).toBe(200);
    expect(page.html).toContain('href="/ui/doctor"');
    expect(page.html).toContain("✗ fail");
    expect(page.html).toContain("disagree on the secret");
    expect(page.html).not.toContain("not-the-shims-secret-02");
    expect((await ui("GET", `/ui/doctor?scaleset=${crypto.randomUUID()}`, { cookie: cookie! })).status).toBe(404);
    expect((await ui("GET", "/ui/doctor")).status).toBe(303);
  });
});
