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

describe("a provider's url is bound to its secret while scale sets use it", () => {
  const inUseBy = async () => {
    const repo = await seed.repository();
    const secret = `provider-secret-${unique("s")}`;
    const p = await seed.provider({ secret });
    const a = await seed.scaleSet(`repositories/${repo.id}`, { provider_name: p.name, name: unique("b-ss") });
    const b = await seed.scaleSet(`repositories/${repo.id}`, { provider_name: p.name, name: unique("a-ss") });
    return { p, secret, scaleSets: [b, a].map((s) => ({ id: s.id, name: s.name })) };
  };
  const OTHER = "https://other-shim.example.com";

  it.each([
    ["a url alone", false],
    ["a url with the same secret again", true],
  ])(
    "refuses %s (409 in_use, naming the scale sets and what to do, changing nothing), and takes it with a new secret",
    async (_, sameSecret) => {
      const { p, secret, scaleSets } = await inUseBy();
      const res = await expectRejectedWithoutWrites(409, () =>
        api.put(`/api/v1/providers/${p.name}`, { url: OTHER, description: "moved", ...(sameSecret && { secret }) }),
      );
      expect(res.body).toMatchObject({
        code: "in_use",
        error: expect.stringContaining("url cannot change while scale sets use it unless the secret changes"),
        details: {
          fields: ["url"],
          url: "https://shim.example.com",
          scale_sets: scaleSets,
          next: expect.stringMatching(/new shim's own secret with the new url.*or move the scale sets listed to another provider/),
        },
      });

      const moved = await api.put(`/api/v1/providers/${p.name}`, { url: OTHER, description: "moved", secret: "the-other-shims-secret-1" });
      expect(moved.status, moved.text).toBe(200);
      expect(moved.body).toMatchObject({ url: OTHER, description: "moved" });
      expect((await api.get(`/api/v1/providers/${p.name}`)).body.url).toBe(OTHER);
    },
  );

  it("takes the same url and other fields while scale sets use the provider, and a url alone once none does", async () => {
    const { p, scaleSets } = await inUseBy();
    const same = await api.put(`/api/v1/providers/${p.name}`, {
      url: "https://shim.example.com/",
      description: "kept",
      timeout_seconds: 9,
    });
    expect(same.status, same.text).toBe(200);
    await expectRejectedWithoutWrites(409, () => api.put(`/api/v1/providers/${p.name}`, { url: OTHER }));

    const spare = await seed.provider();
    for (const s of scaleSets) expect((await api.put(`/api/v1/scalesets/${s.id}`, { provider_name: spare.name })).status).toBe(200);
    const res = await api.put(`/api/v1/providers/${p.name}`, { url: `${OTHER}/lxd` });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ url: `${OTHER}/lxd`, description: "kept", timeout_seconds: 9 });
  });

  it.each([
    "http://shim.example.com",
    "http://10.0.0.1:8080",
    "http://127.0.0.1.example.com",
    "http://localhost.example.com",
    "http://[::2]",
  ])("refuses http:// on a host that is not loopback (%s) on create and update with a field-level 400", async (url) => {
    const create = await expectRejectedWithoutWrites(400, () => api.post("/api/v1/providers", { name: unique("p"), url, secret: SECRET }));
    expect(create.body.details).toEqual([{ path: "url", message: expect.stringMatching(/https:\/\/.*loopback/) }]);
    const p = await seed.provider();
    const update = await expectRejectedWithoutWrites(400, () => api.put(`/api/v1/providers/${p.name}`, { url, secret: SECRET }));
    expect(update.body.details).toEqual([{ path: "url", message: expect.stringMatching(/https:\/\/.*loopback/) }]);
  });

  it("takes http:// on a loopback host only (127.0.0.0/8, localhost, ::1)", async () => {
    await expectRejectedWithoutWrites(400, () =>
      api.post("/api/v1/providers", { name: unique("p"), url: "http://shim.example.com", secret: SECRET }),
    );
    for (const url of ["http://127.0.0.1:8788", "http://127.1.2.3:8788", "http://localhost:8788/shim", "http://[::1]:8788"]) {
      const created = await api.post("/api/v1/providers", { name: unique("p"), url, secret: SECRET });
      expect(created.status, created.text).toBe(201);
      const p = await seed.provider();
      const updated = await api.put(`/api/v1/providers/${p.name}`, { url });
      expect(updated.status, updated.text).toBe(200);
    }
  });

  it("says in the OpenAPI document which urls are taken and when they are fixed", async () => {
    const doc = (await api.get("/api/v1/openapi.json", { token: null })).body;
    const { CreateProvider: create, UpdateProvider: update } = doc.components.schemas;
    expect(create.properties.url.description).toContain("http:// only for a loopback host");
    expect(update.properties.url.description).toContain("Fixed while scale sets use the provider unless `secret` changes");
    expect(Object.keys(doc.paths["/api/v1/providers/{name}"].put.responses)).toContain("409");
  });
});
