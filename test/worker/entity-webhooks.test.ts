import { describe, expect, it } from "vitest";
import type { FakeWorld } from "../fake-github/control-client";
import { createAppCredential, createEndpoint, createPatCredential, newWorld } from "./github-helpers";
import { api, expectRejectedWithoutWrites } from "./helpers";

const OUR_URL = "https://edgerunner.test/webhooks/github";
const FOREIGN_URL = "https://ci.example.com/hook";

async function credentialsName(id: string): Promise<string> {
  return (await api.get(`/api/v1/github/credentials/${id}`)).body.name;
}

async function setup(kind: "repositories" | "organizations", credentials: "pat" | "app" = "pat") {
  const world = await newWorld();
  const endpoint = await createEndpoint(world);
  const credId = credentials === "pat" ? await createPatCredential(endpoint) : await createAppCredential(endpoint);
  const body =
    kind === "repositories"
      ? { owner: "octo", name: "app", credentials_name: await credentialsName(credId), webhook_secret: "hook-secret-1" }
      : { name: "octo", credentials_name: await credentialsName(credId), webhook_secret: "hook-secret-1" };
  const res = await api.post(`/api/v1/${kind}`, body);
  expect(res.status, res.text).toBe(201);
  const scope = kind === "repositories" ? "repos/octo/app" : "orgs/octo";
  await world.seed({ hooks: [{ scope, url: FOREIGN_URL, events: ["push", "workflow_job"], secret: "theirs" }] });
  return { world, id: res.body.id as string, scope, credId };
}

const hooksOf = async (world: FakeWorld, scope: string) => (await world.state()).hooks.filter((h) => h.scope === scope);

describe.each(["repositories", "organizations"] as const)("%s webhook", (kind) => {
  it("installs, shows and uninstalls only our hook", async () => {
    const { world, id, scope } = await setup(kind);
    const path = `/api/v1/${kind}/${id}/webhook`;

    expect((await api.get(path)).status).toBe(404);

    const created = await api.post(path);
    expect(created.status, created.text).toBe(201);
    expect(created.body).toMatchObject({ url: OUR_URL, events: ["workflow_job"], active: true, content_type: "json", insecure_ssl: false });
    expect(created.text).not.toContain("hook-secret-1");

    const ours = (await hooksOf(world, scope)).find((h) => h.config.url === OUR_URL)!;
    expect(ours).toMatchObject({
      name: "web",
      events: ["workflow_job"],
      active: true,
      config: { content_type: "json", insecure_ssl: "0", secret: "hook-secret-1" },
    });

    const shown = await api.get(path);
    expect(shown.status).toBe(200);
    expect(shown.body.id).toBe(ours.id);

    // Installing again brings ours up to date instead of adding a second hook.
    await api.put(`/api/v1/${kind}/${id}`, { webhook_secret: "hook-secret-2" });
    const again = await api.post(path, {});
    expect(again.status).toBe(200);
    expect(again.body.id).toBe(ours.id);
    const hooks = await hooksOf(world, scope);
    expect(hooks).toHaveLength(2);
    expect(hooks.find((h) => h.id === ours.id)!.config.secret).toBe("hook-secret-2");

    expect((await api.delete(path)).status).toBe(204);
    const left = await hooksOf(world, scope);
    expect(left.map((h) => h.config.url)).toEqual([FOREIGN_URL]);
    expect(left[0]).toMatchObject({ events: ["push", "workflow_job"], config: { secret: "theirs" } });
    expect((await api.delete(path)).status).toBe(404);
    expect((await api.get(path)).status).toBe(404);
  });

  it("works with App credentials", async () => {
    const { world, id, scope } = await setup(kind, "app");
    expect((await api.post(`/api/v1/${kind}/${id}/webhook`)).status).toBe(201);
    expect((await hooksOf(world, scope)).map((h) => h.config.url).sort()).toEqual([FOREIGN_URL, OUR_URL].sort());
    expect((await world.requests()).filter((r) => r.path.includes("/hooks")).every((r) => r.auth === "installation")).toBe(true);
  });

  it("rejects bad input with a clear 4xx and writes nothing", async () => {
    const { world, id } = await setup(kind);
    await world.clearRequests();
    await expectRejectedWithoutWrites(400, () => api.post(`/api/v1/${kind}/not-a-uuid/webhook`));
    await expectRejectedWithoutWrites(404, () => api.post(`/api/v1/${kind}/${crypto.randomUUID()}/webhook`));
    const other = kind === "repositories" ? "organizations" : "repositories";
    await expectRejectedWithoutWrites(404, () => api.post(`/api/v1/${other}/${id}/webhook`));
    const bad = await expectRejectedWithoutWrites(400, () => api.post(`/api/v1/${kind}/${id}/webhook`, { insecure_ssl: "yes", extra: 1 }));
    expect(bad.body.details.map((d: { path: string }) => d.path).sort()).toEqual(["(root)", "insecure_ssl"].sort());
    await expectRejectedWithoutWrites(415, () =>
      api.post(`/api/v1/${kind}/${id}/webhook`, undefined, { raw: "x", headers: { "content-type": "text/plain" } }),
    );
    await expectRejectedWithoutWrites(400, () => api.post(`/api/v1/${kind}/${id}/webhook`, undefined, { raw: "{nope" }));
    await expectRejectedWithoutWrites(401, () => api.post(`/api/v1/${kind}/${id}/webhook`, undefined, { token: "wrong" }));
    await expectRejectedWithoutWrites(404, () => api.delete(`/api/v1/${kind}/${crypto.randomUUID()}/webhook`));
    expect(await world.requests()).toEqual([]);
  });

  it("explains GitHub's refusals", async () => {
    const { world, id } = await setup(kind);
    await world.fault({ kind: "server_error", status: 503, times: -1 });
    const down = await api.get(`/api/v1/${kind}/${id}/webhook`);
    expect(down.status).toBe(502);
    expect(down.body).toMatchObject({ error: "GitHub is unavailable", details: { github_status: 503 } });
    await world.clearFaults();

    await world.fault({ kind: "rate_limit", status: 429, retry_after: 600 });
    const limited = await api.post(`/api/v1/${kind}/${id}/webhook`);
    expect(limited.status).toBe(503);
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(500);
  });
});

it("explains missing access to a repository's hooks", async () => {
  const world = await newWorld();
  const endpoint = await createEndpoint(world);
  await world.seed({ pats: [{ token: "ghp_other_only", entities: ["repos/octo/other"] }] });
  const credId = await createPatCredential(endpoint, "ghp_other_only");
  const repo = await api.post("/api/v1/repositories", {
    owner: "octo",
    name: "app",
    credentials_name: await credentialsName(credId),
    webhook_secret: "hook-secret-1",
  });
  const res = await api.post(`/api/v1/repositories/${repo.body.id}/webhook`);
  expect(res.status).toBe(502);
  expect(res.body.details).toMatchObject({ github_status: 404, hint: expect.stringContaining("admin:repo_hook") });
});

it("refuses a webhook on a GitHub enterprise, which has no webhook API (a Gitea instance's is a system hook)", async () => {
  expect((await api.post(`/api/v1/enterprises/${crypto.randomUUID()}/webhook`)).status).toBe(404);
  const world = await newWorld();
  const credId = await createPatCredential(await createEndpoint(world));
  const ent = await api.post("/api/v1/enterprises", {
    name: "acme",
    credentials_name: await credentialsName(credId),
    webhook_secret: "hook-secret-e",
  });
  expect(ent.status, ent.text).toBe(201);
  const res = await api.post(`/api/v1/enterprises/${ent.body.id}/webhook`);
  expect(res.status, res.text).toBe(400);
  expect(res.body.error).toContain("no webhook API for enterprises");
});

it("documents the webhook routes and credential health in the OpenAPI document", async () => {
  const doc = (await api.get("/api/v1/openapi.json", { token: null })).body;
  for (const kind of ["repositories", "organizations"]) {
    expect(Object.keys(doc.paths[`/api/v1/${kind}/{id}/webhook`]).sort()).toEqual(["delete", "get", "post"]);
  }
  expect(Object.keys(doc.components.schemas.GithubCredentials.properties)).toEqual(expect.arrayContaining(["health", "rate_limit"]));
});
