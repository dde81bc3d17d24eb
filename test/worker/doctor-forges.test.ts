import { env } from "cloudflare:workers";
import { describe, expect, inject, it } from "vitest";
import type { DoctorCheck, DoctorReport } from "../../src/doctor/report";
import { createGiteaWorld } from "../fake-gitea/control-client";
import { createTenant } from "../fake-shim/control";
import { api, unique } from "./helpers";

// The setup check against the fake Gitea and the fake Forgejo: each entity checked the way its
// forge works (Gitea's hook through Gitea's API, a token read of the scope; Forgejo polled, its
// token read with the waiting jobs list), and no GitHub check run on them.

const SHIM_SECRET = "doctor-forges-shim-secret";

async function provider() {
  const shim = await createTenant(inject("fakeShimUrl"), { secret: SHIM_SECRET });
  return (await api.post("/api/v1/providers", { name: unique("shim"), url: shim.url, secret: SHIM_SECRET })).body.name as string;
}

async function scaleSet(path: string, providerName: string) {
  const res = await api.post(path, {
    name: unique("ss"),
    provider_name: providerName,
    labels: ["linux"],
    max_runners: 2,
    image: "u",
    flavor: "s",
  });
  expect(res.status, res.text).toBe(201);
  return res.body.id as string;
}

async function entityAndCredentials(forge: "gitea" | "forgejo", url: string, apiUrl: string | undefined, token: string) {
  const endpoint = unique(forge);
  const ep = await api.post("/api/v1/github/endpoints", { name: endpoint, forge, base_url: url, ...(apiUrl && { api_base_url: apiUrl }) });
  expect(ep.status, ep.text).toBe(201);
  const creds = await api.post("/api/v1/github/credentials", {
    name: unique(forge),
    endpoint,
    auth_type: "pat",
    pat: { oauth2_token: token },
  });
  expect(creds.status, creds.text).toBe(201);
  return creds.body.name as string;
}

async function doctor(scaleSetId: string): Promise<DoctorReport> {
  const res = await api.get(`/api/v1/doctor?scaleset=${scaleSetId}`);
  expect(res.status, res.text).toBe(200);
  return res.body;
}

const checkOf = (r: DoctorReport, prefix: string): DoctorCheck => r.checks.find((c) => c.id.startsWith(prefix))!;

describe("the setup check on Gitea and Forgejo", () => {
  it("checks a Gitea entity's hook through Gitea's API and its token with the scope's runners", async () => {
    const gitea = await createGiteaWorld(inject("fakeGiteaUrl"));
    await gitea.seed({ repos: ["octo/app"], tokens: [{ token: "doctor-gitea-token", login: "admin", admin: true }] });
    const creds = await entityAndCredentials("gitea", gitea.url, undefined, "doctor-gitea-token");
    const repo = await api.post("/api/v1/repositories", {
      owner: "octo",
      name: "app",
      credentials_name: creds,
      webhook_secret: unique("hook-secret"),
    });
    expect(repo.status, repo.text).toBe(201);
    const id = await scaleSet(`/api/v1/repositories/${repo.body.id}/scalesets`, await provider());

    const before = await doctor(id);
    expect(checkOf(before, "entity.access:")).toMatchObject({
      status: "ok",
      summary: expect.stringMatching(/^Gitea let .* list its runners\.$/),
    });
    expect(checkOf(before, "entity.webhook:")).toMatchObject({ status: "fail", fix: "edgerunner repo webhook install octo/app" });
    expect(checkOf(before, "entity.webhook:").summary).toMatch(
      /No Gitea hook of it delivers to https:\/\/edgerunner\.test\/webhooks\/gitea/,
    );

    expect((await api.post(`/api/v1/repositories/${repo.body.id}/webhook`)).status).toBe(201);
    const after = await doctor(id);
    expect(checkOf(after, "entity.webhook:")).toMatchObject({
      status: "ok",
      summary: expect.stringMatching(/delivers workflow_job events to .*\/webhooks\/gitea/),
    });
    expect(after.checks.filter((c) => /GitHub/.test(c.summary) && /^(entity|scaleset)\./.test(c.id))).toEqual([]);

    // A token Gitea refuses fails the access check, saying what to give it.
    await env.DB.prepare("UPDATE entities SET owner = 'nobody' WHERE id = ?").bind(repo.body.id).run();
    const missing = checkOf(await doctor(id), "entity.access:");
    expect(missing).toMatchObject({ status: "fail", summary: expect.stringMatching(/^Gitea answered 404 for its runners/) });
    expect(missing.fix).toMatch(/write:repository/);
  });

  it("says a Forgejo entity is polled and checks its token with the scope's waiting jobs", async () => {
    const world = (await (await fetch(`${inject("fakeForgejoUrl")}/_fake/worlds`, { method: "POST" })).json()) as {
      url: string;
      api_url: string;
    };
    await fetch(`${world.url}/_fake/tokens`, { method: "POST", body: JSON.stringify({ token: "doctor-forgejo-token" }) });
    const creds = await entityAndCredentials("forgejo", world.url, world.api_url, "doctor-forgejo-token");
    const repo = await api.post("/api/v1/repositories", { owner: "acme", name: "app", credentials_name: creds });
    expect(repo.status, repo.text).toBe(201);
    const id = await scaleSet(`/api/v1/repositories/${repo.body.id}/scalesets`, await provider());

    const r = await doctor(id);
    expect(checkOf(r, "entity.access:")).toMatchObject({
      status: "ok",
      summary: expect.stringMatching(/^Forgejo let .* list its waiting jobs\.$/),
    });
    expect(checkOf(r, "entity.webhook:")).toMatchObject({ status: "ok", summary: expect.stringMatching(/^Polled: no webhook needed/) });
    expect(r.checks.filter((c) => /GitHub/.test(c.summary) && /^(entity|scaleset)\./.test(c.id))).toEqual([]);
    const requests = (await (await fetch(`${world.url}/_fake/requests`)).json()) as { method: string; path: string }[];
    expect(requests.some((q) => q.method === "GET" && q.path.endsWith("/repos/acme/app/actions/runners/jobs"))).toBe(true);
  });
});
