import { describe, expect, it } from "vitest";
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
});
