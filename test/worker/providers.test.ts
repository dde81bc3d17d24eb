import { describe, expect, it } from "vitest";
import { api, expectRejectedWithoutWrites, seed, unique } from "./helpers";

const SECRET = "shim-shared-secret-0001";

describe("providers", () => {
  it("registers, shows, lists, updates and deletes a provider shim", async () => {
    const name = unique("lxd");
    const created = await api.post("/api/v1/providers", { name, url: "https://shim.example.com/lxd/", secret: SECRET, description: "LXD" });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      id: expect.any(String),
      name,
      url: "https://shim.example.com/lxd",
      description: "LXD",
      timeout_seconds: 30,
      has_secret: true,
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    expect(created.text).not.toContain(SECRET);
    expect((await api.get(`/api/v1/providers/${name}`)).body).toEqual(created.body);
    expect((await api.get("/api/v1/providers")).body.map((p: any) => p.name)).toContain(name);

    const updated = await api.put(`/api/v1/providers/${name}`, {
      url: "http://127.0.0.1:9000",
      secret: "rotated-shim-secret-02",
      timeout_seconds: 120,
    });
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({ url: "http://127.0.0.1:9000", description: "LXD", timeout_seconds: 120 });
    expect(updated.text).not.toContain("rotated-shim-secret-02");

    expect((await api.delete(`/api/v1/providers/${name}`)).status).toBe(204);
    expect((await api.get(`/api/v1/providers/${name}`)).status).toBe(404);
  });

  it.each([
    ["a short secret", { secret: "short" }, "secret"],
    ["no url", { url: undefined }, "url"],
    ["a url that is not http(s)", { url: "file:///etc/passwd" }, "url"],
    ["a mistyped description", { description: ["x"] }, "description"],
    ["an unknown field", { token: "x" }, "(root)"],
    ["an invalid name", { name: "../x" }, "name"],
    ["a zero timeout", { timeout_seconds: 0 }, "timeout_seconds"],
    ["a timeout over ten minutes", { timeout_seconds: 601 }, "timeout_seconds"],
    ["a fractional timeout", { timeout_seconds: 1.5 }, "timeout_seconds"],
    ["a timeout given as text", { timeout_seconds: "30" }, "timeout_seconds"],
  ])("rejects %s without writing", async (_, over, field) => {
    const res = await expectRejectedWithoutWrites(400, () =>
      api.post("/api/v1/providers", { name: unique("p"), url: "https://shim.example.com", secret: SECRET, ...over }),
    );
    expect(res.body.details.map((d: any) => d.path)).toContain(field);
  });

  it("rejects a duplicate name (409), bad updates (400) and unknown names (404) without writing", async () => {
    const p = await seed.provider();
    await expectRejectedWithoutWrites(409, () => api.post("/api/v1/providers", { name: p.name, url: "https://x.example", secret: SECRET }));
    await expectRejectedWithoutWrites(400, () => api.put(`/api/v1/providers/${p.name}`, { secret: "short" }));
    await expectRejectedWithoutWrites(400, () => api.put(`/api/v1/providers/${p.name}`, { name: "rename" }));
    await expectRejectedWithoutWrites(400, () => api.put(`/api/v1/providers/${p.name}`, { timeout_seconds: -1 }));
    await expectRejectedWithoutWrites(404, () => api.put("/api/v1/providers/nope", { description: "x" }));
  });

  it("refuses to delete a provider a scale set uses (409)", async () => {
    const repo = await seed.repository();
    const p = await seed.provider();
    const ss = await seed.scaleSet(`repositories/${repo.id}`, { provider_name: p.name });
    const res = await expectRejectedWithoutWrites(409, () => api.delete(`/api/v1/providers/${p.name}`));
    expect(res.body.details.scale_sets).toEqual([{ id: ss.id, name: ss.name }]);
  });
});
