import { describe, expect, it } from "vitest";
import { createAppCredential, createEndpoint, createPatCredential, newWorld } from "./github-helpers";
import { api, expectRejectedWithoutWrites, seed, unique } from "./helpers";

const ghes = (over: Record<string, unknown> = {}) => ({
  name: unique("ghes"),
  description: "our GHES",
  base_url: "https://ghes.example.com/",
  api_base_url: "https://ghes.example.com/api/v3",
  upload_base_url: "https://ghes.example.com/api/uploads",
  ...over,
});
const PEM = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";

describe("GitHub endpoints", () => {
  it("lists github.com by default", async () => {
    const res = await api.get("/api/v1/github/endpoints");
    expect(res.status).toBe(200);
    expect(res.body.map((e: any) => e.name)).toContain("github.com");
  });

  it("adds, shows, updates and deletes a GHES endpoint", async () => {
    const body = ghes({ ca_cert_bundle: PEM });
    const created = await api.post("/api/v1/github/endpoints", body);
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      name: body.name,
      base_url: "https://ghes.example.com",
      api_base_url: "https://ghes.example.com/api/v3",
      ca_cert_bundle: PEM,
    });
    expect((await api.get(`/api/v1/github/endpoints/${body.name}`)).body).toEqual(created.body);

    const updated = await api.put(`/api/v1/github/endpoints/${body.name}`, { description: "renamed", ca_cert_bundle: null });
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({ description: "renamed", ca_cert_bundle: null, api_base_url: "https://ghes.example.com/api/v3" });

    expect((await api.delete(`/api/v1/github/endpoints/${body.name}`)).status).toBe(204);
    expect((await api.get(`/api/v1/github/endpoints/${body.name}`)).status).toBe(404);
  });

  it("rejects a duplicate name with 409 and changes nothing", async () => {
    const body = ghes();
    expect((await api.post("/api/v1/github/endpoints", body)).status).toBe(201);
    await expectRejectedWithoutWrites(409, () => api.post("/api/v1/github/endpoints", { ...body, description: "other" }));
    await expectRejectedWithoutWrites(409, () => api.post("/api/v1/github/endpoints", { ...ghes(), name: "github.com" }));
  });

  it.each([
    ["missing api_base_url", { api_base_url: undefined }, "api_base_url"],
    ["not a URL", { base_url: "ghes.example.com" }, "base_url"],
    ["not http(s)", { api_base_url: "ftp://ghes.example.com" }, "api_base_url"],
    ["mistyped field", { description: 42 }, "description"],
    ["unknown field", { api_url: "https://x" }, "(root)"],
    ["bad name", { name: "has space" }, "name"],
    ["CA bundle that is not PEM", { ca_cert_bundle: "hello" }, "ca_cert_bundle"],
  ])("rejects %s with a field-level 400", async (_, over, path) => {
    const res = await expectRejectedWithoutWrites(400, () => api.post("/api/v1/github/endpoints", ghes(over)));
    expect(res.body.details.map((d: any) => d.path)).toContain(path);
  });

  it("rejects bad updates and unknown names without writing", async () => {
    const { name } = (await api.post("/api/v1/github/endpoints", ghes())).body;
    await expectRejectedWithoutWrites(400, () => api.put(`/api/v1/github/endpoints/${name}`, { base_url: 7 }));
    await expectRejectedWithoutWrites(400, () => api.put(`/api/v1/github/endpoints/${name}`, { name: "rename-not-allowed" }));
    await expectRejectedWithoutWrites(404, () => api.put("/api/v1/github/endpoints/nope", { description: "x" }));
  });

  it("refuses to delete github.com or an endpoint credentials use (409), changing nothing", async () => {
    await expectRejectedWithoutWrites(409, () => api.delete("/api/v1/github/endpoints/github.com"));
    const { name } = (await api.post("/api/v1/github/endpoints", ghes())).body;
    const creds = await seed.patCredentials({ endpoint: name });
    const res = await expectRejectedWithoutWrites(409, () => api.delete(`/api/v1/github/endpoints/${name}`));
    expect(res.body.details.credentials).toEqual([creds.name]);
  });

  it.each([
    ["base_url", { base_url: "https://elsewhere.example.com" }],
    ["api_base_url", { api_base_url: "https://elsewhere.example.com/api/v3" }],
    ["upload_base_url", { upload_base_url: "https://elsewhere.example.com/api/uploads" }],
    ["a new ca_cert_bundle", { ca_cert_bundle: PEM.replace("MIIB", "MIIC") }],
    ["no ca_cert_bundle", { ca_cert_bundle: null }],
  ])("refuses to change %s while credentials use the endpoint (409 in_use), changing nothing", async (field, change) => {
    const { name } = (await api.post("/api/v1/github/endpoints", ghes({ ca_cert_bundle: PEM }))).body;
    const creds = await seed.patCredentials({ endpoint: name });
    const repo = await seed.repository({ credentials_name: creds.name });
    const res = await expectRejectedWithoutWrites(409, () =>
      api.put(`/api/v1/github/endpoints/${name}`, { description: "moved", ...change }),
    );
    expect(res.body).toMatchObject({
      code: "in_use",
      error: expect.stringContaining("cannot change while credentials or entities use it"),
      details: {
        fields: [field.replace(/^(a new|no) /, "")],
        credentials: [creds.name],
        entities: [{ id: repo.id, kind: "repository" }],
        next: expect.stringContaining("delete the credentials"),
      },
    });
  });

  it("lets the description change, and the same URLs and CA bundle be sent again, while credentials use it", async () => {
    const body = ghes({ ca_cert_bundle: PEM });
    const created = (await api.post("/api/v1/github/endpoints", body)).body;
    await seed.patCredentials({ endpoint: body.name });
    const { name: _, description: __, ...same } = body;
    const res = await api.put(`/api/v1/github/endpoints/${body.name}`, { ...same, description: "still here" });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ ...created, description: "still here", updated_at: expect.any(String) });
    // github.com, built in, is moved by no one while credentials use it either.
    await seed.patCredentials();
    await expectRejectedWithoutWrites(409, () =>
      api.put("/api/v1/github/endpoints/github.com", { api_base_url: "https://api.elsewhere.example" }),
    );
  });

  it("sends no credential to where a re-pointed endpoint would lead", async () => {
    const [home, elsewhere] = [await newWorld(), await newWorld()];
    const endpoint = await createEndpoint(home);
    const app = await createAppCredential(endpoint);
    const pat = await createPatCredential(endpoint);
    const name = (await api.get(`/api/v1/github/credentials/${pat}`)).body.name;
    const repo = await api.post("/api/v1/repositories", {
      owner: "octo",
      name: "app",
      credentials_name: name,
      webhook_secret: "hook-secret-1",
    });

    const res = await expectRejectedWithoutWrites(409, () =>
      api.put(`/api/v1/github/endpoints/${endpoint}`, { api_base_url: elsewhere.url }),
    );
    const names = [(await api.get(`/api/v1/github/credentials/${app}`)).body.name, name].sort();
    expect(res.body.details).toMatchObject({ fields: ["api_base_url"], credentials: names, entities: [{ id: repo.body.id }] });

    expect((await api.post(`/api/v1/repositories/${repo.body.id}/webhook`)).status).toBe(201);
    expect(await elsewhere.requests()).toEqual([]);
    expect((await home.state()).hooks.map((h) => h.config.secret)).toEqual(["hook-secret-1"]);
  });

  it.each([
    ["base_url", "http://ghes.example.com"],
    ["api_base_url", "http://ghes.example.com/api/v3"],
    ["upload_base_url", "http://ghes.example.com/api/uploads"],
    ["api_base_url", "http://127.0.0.1.example.com/api/v3"],
    ["api_base_url", "http://10.0.0.1/api/v3"],
    ["api_base_url", "http://[::2]/api/v3"],
    ["api_base_url", "http://localhost.example.com"],
  ])("refuses http:// %s on a host that is not loopback (%s) with a field-level 400", async (field, url) => {
    const create = await expectRejectedWithoutWrites(400, () => api.post("/api/v1/github/endpoints", ghes({ [field]: url })));
    expect(create.body.details).toEqual([{ path: field, message: expect.stringContaining("https://") }]);
    const { name } = (await api.post("/api/v1/github/endpoints", ghes())).body;
    const update = await expectRejectedWithoutWrites(400, () => api.put(`/api/v1/github/endpoints/${name}`, { [field]: url }));
    expect(update.body.details).toEqual([{ path: field, message: expect.stringContaining("loopback") }]);
  });

  it.each(["http://127.0.0.1:8080", "http://127.1.2.3/api/v3", "http://localhost:3000", "http://[::1]:9000/api/v3"])(
    "takes http:// on a loopback host (%s)",
    async (url) => {
      const res = await api.post("/api/v1/github/endpoints", ghes({ base_url: url, api_base_url: url, upload_base_url: url }));
      expect(res.status, res.text).toBe(201);
    },
  );

  it("says in the OpenAPI document which URLs are taken and when they are fixed", async () => {
    const doc = (await api.get("/api/v1/openapi.json", { token: null })).body;
    const { CreateGithubEndpoint: create, UpdateGithubEndpoint: update } = doc.components.schemas;
    for (const field of ["base_url", "api_base_url", "upload_base_url"]) {
      expect(create.properties[field].description).toContain("http:// only for a loopback host");
      expect(update.properties[field].description).toContain("Fixed while credentials or entities use the endpoint");
    }
    expect(update.properties.ca_cert_bundle.description).toContain("Fixed while credentials or entities use the endpoint");
    expect(Object.keys(doc.paths["/api/v1/github/endpoints/{name}"].put.responses)).toContain("409");
  });
});
