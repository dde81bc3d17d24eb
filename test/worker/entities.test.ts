import { describe, expect, it } from "vitest";
import { api, expectRejectedWithoutWrites, seed, unique } from "./helpers";

const kinds = [
  {
    path: "repositories",
    body: (creds: string) => ({ owner: "Octo-Org", name: unique("Repo"), credentials_name: creds, webhook_secret: "whsec-12345678" }),
  },
  { path: "organizations", body: (creds: string) => ({ name: unique("Org"), credentials_name: creds, webhook_secret: "whsec-12345678" }) },
  { path: "enterprises", body: (creds: string) => ({ name: unique("ent"), credentials_name: creds, webhook_secret: "whsec-12345678" }) },
] as const;

describe.each(kinds)("/$path", ({ path, body }) => {
  it("creates, shows, lists, updates and deletes", async () => {
    const creds = await seed.patCredentials();
    const input = body(creds.name);
    const created = await api.post(`/api/v1/${path}`, input);
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      name: input.name,
      endpoint: "github.com",
      credentials_id: creds.id,
      credentials_name: creds.name,
      has_webhook_secret: true,
      forge: "github",
      webhook_url: "https://edgerunner.test/webhooks/github",
    });
    if (path === "repositories") expect(created.body.owner).toBe("Octo-Org");
    else expect(created.body).not.toHaveProperty("owner");
    expect(created.text).not.toContain("whsec-12345678");

    const { id } = created.body;
    expect((await api.get(`/api/v1/${path}/${id}`)).body).toEqual(created.body);
    expect((await api.get(`/api/v1/${path}`)).body.map((e: any) => e.id)).toContain(id);

    const other = await seed.patCredentials();
    const updated = await api.put(`/api/v1/${path}/${id}`, { credentials_name: other.name, webhook_secret: "another-secret" });
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({ credentials_id: other.id, credentials_name: other.name });
    expect(updated.text).not.toContain("another-secret");

    expect((await api.delete(`/api/v1/${path}/${id}`)).status).toBe(204);
    expect((await api.get(`/api/v1/${path}/${id}`)).status).toBe(404);
  });

  it("rejects the same entity twice, whatever the case (409)", async () => {
    const creds = await seed.patCredentials();
    const input = body(creds.name);
    expect((await api.post(`/api/v1/${path}`, input)).status).toBe(201);
    const shouting = {
      ...input,
      name: input.name.toUpperCase(),
      ...("owner" in input ? { owner: String(input.owner).toLowerCase() } : {}),
    };
    await expectRejectedWithoutWrites(409, () => api.post(`/api/v1/${path}`, shouting));
  });

  it.each([
    ["unknown credentials", { credentials_name: "nope" }, "credentials_name"],
    ["a short webhook secret", { webhook_secret: "short" }, "webhook_secret"],
    ["no webhook secret", { webhook_secret: undefined }, "webhook_secret"],
    ["a mistyped name", { name: 5 }, "name"],
    ["an invalid name", { name: "a/b" }, "name"],
    ["an unknown field", { endpoint: "github.com" }, "(root)"],
  ])("rejects %s without writing", async (_, over, field) => {
    const creds = await seed.patCredentials();
    const res = await expectRejectedWithoutWrites(400, () => api.post(`/api/v1/${path}`, { ...body(creds.name), ...over }));
    expect(res.body.details.map((d: any) => d.path)).toContain(field);
  });

  it("rejects bad updates without writing", async () => {
    const creds = await seed.patCredentials();
    const { id } = (await api.post(`/api/v1/${path}`, body(creds.name))).body;
    await expectRejectedWithoutWrites(400, () => api.put(`/api/v1/${path}/${id}`, { credentials_name: "nope" }));
    await expectRejectedWithoutWrites(400, () => api.put(`/api/v1/${path}/${id}`, { webhook_secret: "short" }));
    await expectRejectedWithoutWrites(400, () => api.put(`/api/v1/${path}/${id}`, { name: "renamed" }));
    const ghes = (
      await api.post("/api/v1/github/endpoints", {
        name: unique("ghes"),
        base_url: "https://ghes.example.com",
        api_base_url: "https://ghes.example.com/api/v3",
      })
    ).body;
    const ghesCreds = await seed.patCredentials({ endpoint: ghes.name });
    const res = await expectRejectedWithoutWrites(400, () => api.put(`/api/v1/${path}/${id}`, { credentials_name: ghesCreds.name }));
    expect(res.body.details[0].message).toMatch(/endpoint/);
  });

  it("refuses to delete while it has scale sets (409), and 404s unknown ids", async () => {
    const creds = await seed.patCredentials();
    const { id } = (await api.post(`/api/v1/${path}`, body(creds.name))).body;
    const ss = await seed.scaleSet(`${path}/${id}`);
    const res = await expectRejectedWithoutWrites(409, () => api.delete(`/api/v1/${path}/${id}`));
    expect(res.body.details.scale_sets).toEqual([{ id: ss.id, name: ss.name }]);
  });
});

describe("entities of different kinds", () => {
  it("do not show up under each other's routes", async () => {
    const repo = await seed.repository();
    expect((await api.get(`/api/v1/organizations/${repo.id}`)).status).toBe(404);
    expect((await api.delete(`/api/v1/enterprises/${repo.id}`)).status).toBe(404);
    expect((await api.get(`/api/v1/repositories/${repo.id}`)).status).toBe(200);
  });

  it("can share a name across kinds and endpoints", async () => {
    const creds = await seed.patCredentials();
    const name = unique("shared");
    expect((await api.post("/api/v1/organizations", { name, credentials_name: creds.name, webhook_secret: "whsec-12345678" })).status).toBe(
      201,
    );
    expect((await api.post("/api/v1/enterprises", { name, credentials_name: creds.name, webhook_secret: "whsec-12345678" })).status).toBe(
      201,
    );
    const ghes = (
      await api.post("/api/v1/github/endpoints", {
        name: unique("ghes"),
        base_url: "https://g.example",
        api_base_url: "https://g.example/api/v3",
      })
    ).body;
    const ghesCreds = await seed.patCredentials({ endpoint: ghes.name });
    const onGhes = await api.post("/api/v1/organizations", { name, credentials_name: ghesCreds.name, webhook_secret: "whsec-12345678" });
    expect(onGhes.status).toBe(201);
    expect(onGhes.body.endpoint).toBe(ghes.name);
  });
});

describe("parent links (which scale sets a delivery may reach)", () => {
  it("are off by default, settable on repositories and organizations, and name a registered enterprise", async () => {
    const creds = await seed.patCredentials();
    const ent = await api.post("/api/v1/enterprises", {
      name: unique("corp"),
      credentials_name: creds.name,
      webhook_secret: "whsec-12345678",
    });
    expect(ent.status).toBe(201);
    expect(ent.body).not.toHaveProperty("use_parent_scale_sets");

    const repo = await api.post("/api/v1/repositories", {
      owner: "octo",
      name: unique("r"),
      credentials_name: creds.name,
      webhook_secret: "whsec-12345678",
    });
    expect(repo.body).toMatchObject({ use_parent_scale_sets: false, enterprise: null });

    const linked = await api.put(`/api/v1/repositories/${repo.body.id}`, { use_parent_scale_sets: true, enterprise: ent.body.name });
    expect(linked.status, linked.text).toBe(200);
    expect(linked.body).toMatchObject({ use_parent_scale_sets: true, enterprise: ent.body.name });
    // Other fields left alone by an update that does not name them.
    const again = await api.put(`/api/v1/repositories/${repo.body.id}`, { webhook_secret: "whsec-87654321" });
    expect(again.body).toMatchObject({ use_parent_scale_sets: true, enterprise: ent.body.name });
    const unlinked = await api.put(`/api/v1/repositories/${repo.body.id}`, { enterprise: null });
    expect(unlinked.body).toMatchObject({ use_parent_scale_sets: true, enterprise: null });

    const org = await api.post("/api/v1/organizations", {
      name: unique("o"),
      credentials_name: creds.name,
      webhook_secret: "whsec-12345678",
      use_parent_scale_sets: true,
      enterprise: ent.body.name,
    });
    expect(org.status, org.text).toBe(201);
    expect(org.body).toMatchObject({ use_parent_scale_sets: true, enterprise: ent.body.name });
  });

  it("refuses an enterprise that is not registered, and links on an enterprise, writing nothing", async () => {
    const creds = await seed.patCredentials();
    const res = await expectRejectedWithoutWrites(400, () =>
      api.post("/api/v1/repositories", {
        owner: "octo",
        name: unique("r"),
        credentials_name: creds.name,
        webhook_secret: "whsec-12345678",
        enterprise: "nobody-here",
      }),
    );
    expect(res.body.details).toEqual([{ path: "enterprise", message: expect.stringContaining("nobody-here") }]);
    const org = await api.post("/api/v1/organizations", {
      name: unique("o"),
      credentials_name: creds.name,
      webhook_secret: "whsec-12345678",
    });
    await expectRejectedWithoutWrites(400, () => api.put(`/api/v1/organizations/${org.body.id}`, { enterprise: "nobody-here" }));
    await expectRejectedWithoutWrites(400, () => api.put(`/api/v1/organizations/${org.body.id}`, { use_parent_scale_sets: "yes" }));
    const ent = await api.post("/api/v1/enterprises", {
      name: unique("corp"),
      credentials_name: creds.name,
      webhook_secret: "whsec-12345678",
    });
    await expectRejectedWithoutWrites(400, () => api.put(`/api/v1/enterprises/${ent.body.id}`, { use_parent_scale_sets: true }));
    await expectRejectedWithoutWrites(400, () =>
      api.post("/api/v1/enterprises", {
        name: unique("corp"),
        credentials_name: creds.name,
        webhook_secret: "whsec-12345678",
        enterprise: ent.body.name,
      }),
    );
  });
});

describe("an entity's forge", () => {
  it("says its endpoint's forge and where that forge delivers its webhooks: Gitea its own route, Forgejo none (polled)", async () => {
    for (const [forge, url] of [
      ["gitea", "https://edgerunner.test/webhooks/gitea"],
      ["forgejo", null],
    ] as const) {
      const endpoint = unique(forge);
      expect((await api.post("/api/v1/github/endpoints", { name: endpoint, forge, base_url: `https://${endpoint}.example` })).status).toBe(
        201,
      );
      const creds = await api.post("/api/v1/github/credentials", {
        name: unique(`${forge}-token`),
        endpoint,
        auth_type: "pat",
        pat: { oauth2_token: "forge-token" },
      });
      expect(creds.status, creds.text).toBe(201);
      const created = await api.post("/api/v1/repositories", {
        owner: "octo",
        name: unique("app"),
        credentials_name: creds.body.name,
        webhook_secret: "whsec-12345678",
      });
      expect(created.status, created.text).toBe(201);
      expect(created.body).toMatchObject({ endpoint, forge, webhook_url: url });
      expect((await api.get(`/api/v1/repositories/${created.body.id}`)).body).toMatchObject({ forge, webhook_url: url });
    }
  });
});
