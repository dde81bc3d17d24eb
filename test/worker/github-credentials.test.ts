import { describe, expect, it } from "vitest";
import pkcs1 from "../fixtures/app-key-pkcs1.pem?raw";
import pkcs8 from "../fixtures/app-key-pkcs8.pem?raw";
import { api, expectRejectedWithoutWrites, seed, unique } from "./helpers";

const pat = (over: Record<string, unknown> = {}) => ({
  name: unique("pat"),
  auth_type: "pat",
  pat: { oauth2_token: "ghp_0123456789abcdef" },
  ...over,
});
const app = (over: Record<string, unknown> = {}, appOver: Record<string, unknown> = {}) => ({
  name: unique("app"),
  auth_type: "app",
  app: { app_id: 1234, installation_id: 5678, private_key: pkcs1, ...appOver },
  ...over,
});

describe("GitHub credentials", () => {
  it("creates PAT credentials on github.com by default and never returns the token", async () => {
    const res = await api.post("/api/v1/github/credentials", pat({ description: "ci bot" }));
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.any(String),
      name: expect.any(String),
      description: "ci bot",
      endpoint: "github.com",
      auth_type: "pat",
      app_id: null,
      installation_id: null,
      has_secret: true,
      has_webhook_secret: false,
      health: { status: "ok", reason: null, since: null },
      rate_limit: null,
      // The Worker's GitHub budget in the tests (vitest.config.ts); nothing learned yet.
      budget: { configured_points_per_minute: 60_000, effective_points_per_minute: 60_000, learned_at: null },
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    expect(res.text).not.toContain("ghp_0123456789abcdef");
  });

  it.each([
    ["PKCS#1", pkcs1],
    ["PKCS#8", pkcs8],
  ])("creates GitHub App credentials with a %s key", async (_, key) => {
    const res = await api.post("/api/v1/github/credentials", app({}, { private_key: key }));
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ auth_type: "app", app_id: 1234, installation_id: 5678, has_secret: true });
    expect(res.text).not.toContain("PRIVATE KEY");
  });

  it("shows, lists, updates and deletes", async () => {
    const { id, name } = (await api.post("/api/v1/github/credentials", app())).body;
    expect((await api.get(`/api/v1/github/credentials/${id}`)).body.name).toBe(name);
    expect((await api.get("/api/v1/github/credentials")).body.map((c: any) => c.id)).toContain(id);

    const renamed = unique("renamed");
    const res = await api.put(`/api/v1/github/credentials/${id}`, { name: renamed, app: { installation_id: 99, private_key: pkcs8 } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ name: renamed, app_id: 1234, installation_id: 99 });

    expect((await api.delete(`/api/v1/github/credentials/${id}`)).status).toBe(204);
    expect((await api.get(`/api/v1/github/credentials/${id}`)).status).toBe(404);
  });

  it("stores a new token on update", async () => {
    const { id } = (await api.post("/api/v1/github/credentials", pat())).body;
    const before = (await api.get(`/api/v1/github/credentials/${id}`)).body;
    const res = await api.put(`/api/v1/github/credentials/${id}`, { pat: { oauth2_token: "ghp_new" } });
    expect(res.status).toBe(200);
    expect(res.text).not.toContain("ghp_new");
    expect(Date.parse(res.body.updated_at)).toBeGreaterThanOrEqual(Date.parse(before.updated_at));
  });

  it.each([
    ["no auth_type", { auth_type: undefined }, "auth_type"],
    ["an unknown auth_type", { auth_type: "oauth" }, "auth_type"],
    ["a PAT without its token", { pat: {} }, "pat.oauth2_token"],
    ["a PAT with an app block", { pat: undefined, app: { app_id: 1, installation_id: 2, private_key: pkcs1 } }, "pat"],
    ["a mistyped token", { pat: { oauth2_token: 123 } }, "pat.oauth2_token"],
    ["a misspelled field", { pat: { oauth_token: "x" } }, "pat"],
  ])("rejects PAT credentials with %s", async (_, over, path) => {
    const res = await expectRejectedWithoutWrites(400, () => api.post("/api/v1/github/credentials", pat(over)));
    expect(res.body.details.map((d: any) => d.path).join(" ")).toContain(path);
  });

  it.each([
    ["a key that is not PEM", { private_key: "not a key" }, "app.private_key"],
    ["a string app_id", { app_id: "1234" }, "app.app_id"],
    ["a negative installation_id", { installation_id: -1 }, "app.installation_id"],
    ["a fractional app_id", { app_id: 1.5 }, "app.app_id"],
  ])("rejects App credentials with %s", async (_, appOver, path) => {
    const res = await expectRejectedWithoutWrites(400, () => api.post("/api/v1/github/credentials", app({}, appOver)));
    expect(res.body.details.map((d: any) => d.path)).toContain(path);
  });

  it("rejects an unknown endpoint (400) and a duplicate name (409) without writing", async () => {
    const res = await expectRejectedWithoutWrites(400, () => api.post("/api/v1/github/credentials", pat({ endpoint: "nowhere" })));
    expect(res.body.details).toEqual([{ path: "endpoint", message: "unknown endpoint 'nowhere'" }]);
    const body = pat();
    expect((await api.post("/api/v1/github/credentials", body)).status).toBe(201);
    await expectRejectedWithoutWrites(409, () => api.post("/api/v1/github/credentials", body));
  });

  it("rejects updates that do not fit the credential type, a taken name or an unknown id", async () => {
    const patCreds = (await api.post("/api/v1/github/credentials", pat())).body;
    const appCreds = (await api.post("/api/v1/github/credentials", app())).body;
    await expectRejectedWithoutWrites(400, () => api.put(`/api/v1/github/credentials/${patCreds.id}`, { app: { app_id: 1 } }));
    await expectRejectedWithoutWrites(400, () => api.put(`/api/v1/github/credentials/${appCreds.id}`, { pat: { oauth2_token: "x" } }));
    await expectRejectedWithoutWrites(400, () => api.put(`/api/v1/github/credentials/${appCreds.id}`, { auth_type: "pat" }));
    await expectRejectedWithoutWrites(409, () => api.put(`/api/v1/github/credentials/${appCreds.id}`, { name: patCreds.name }));
    await expectRejectedWithoutWrites(404, () =>
      api.put("/api/v1/github/credentials/3b241101-e2bb-4255-8caf-4136c566a962", { description: "x" }),
    );
  });

  it("refuses to move credentials to another endpoint: they go only where they were created for", async () => {
    const { name } = (
      await api.post("/api/v1/github/endpoints", {
        name: unique("ghes"),
        base_url: "https://ghes.example.com",
        api_base_url: "https://ghes.example.com/api/v3",
      })
    ).body;
    const creds = (await api.post("/api/v1/github/credentials", pat())).body;
    for (const body of [{ endpoint: name }, { endpoint: name, pat: { oauth2_token: "ghp_new" } }, { endpoint_name: name }]) {
      const res = await expectRejectedWithoutWrites(400, () => api.put(`/api/v1/github/credentials/${creds.id}`, body));
      expect(res.body.details).toEqual([{ path: "(root)", message: expect.stringMatching(/Unrecognized key: "endpoint(_name)?"/) }]);
    }
    expect((await api.get(`/api/v1/github/credentials/${creds.id}`)).body.endpoint).toBe("github.com");
  });

  it("refuses to delete credentials an entity uses (409)", async () => {
    const repo = await seed.repository();
    const res = await expectRejectedWithoutWrites(409, () => api.delete(`/api/v1/github/credentials/${repo.credentials_id}`));
    expect(res.body.details.entities).toEqual([{ id: repo.id, kind: "repository", name: `octo/${repo.name}` }]);
    expect(res.body.error).toBe(
      `credentials are in use: repository octo/${repo.name} acts with them (give it other credentials_name first)`,
    );
  });
});
