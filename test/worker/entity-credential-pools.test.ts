import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { api, expectRejectedWithoutWrites, insertInstance, seed, unique } from "./helpers";

// An entity's credential pool through the admin API: other credentials of its endpoint that mint
// its runners' JIT configs beside its own. Created with the entity or replaced by an update,
// shown in every view, checked name by name, and keeping its credentials from being deleted.

const kinds = [
  { path: "repositories", body: (creds: string) => ({ owner: "octo", name: unique("repo"), credentials_name: creds }) },
  { path: "organizations", body: (creds: string) => ({ name: unique("org"), credentials_name: creds }) },
  { path: "enterprises", body: (creds: string) => ({ name: unique("ent"), credentials_name: creds }) },
] as const;

const secret = { webhook_secret: "whsec-12345678" };
const member = (c: { id: string; name: string }) => ({ id: c.id, name: c.name });
const patCredentials = () => seed.patCredentials() as Promise<{ id: string; name: string }>;

async function ghesCredentials() {
  const ghes = await api.post("/api/v1/github/endpoints", {
    name: unique("ghes"),
    base_url: "https://ghes.example.com",
    api_base_url: "https://ghes.example.com/api/v3",
  });
  expect(ghes.status, ghes.text).toBe(201);
  return (await seed.patCredentials({ endpoint: ghes.body.name })) as { id: string; name: string };
}

describe.each(kinds)("/$path pool_credentials", ({ path, body }) => {
  it("is set on create, shown by show and list, replaced by an update, left alone when not sent, emptied by []", async () => {
    const [own, a, b, c] = await Promise.all([patCredentials(), patCredentials(), patCredentials(), patCredentials()]);
    const created = await api.post(`/api/v1/${path}`, { ...body(own.name), ...secret, pool_credentials: [b.name, a.name] });
    expect(created.status, created.text).toBe(201);
    expect(created.body.pool_credentials).toEqual([member(b), member(a)]);
    const { id } = created.body;
    expect((await api.get(`/api/v1/${path}/${id}`)).body).toEqual(created.body);
    const listed = (await api.get(`/api/v1/${path}`)).body as { id: string; pool_credentials: unknown }[];
    expect(listed.find((e) => e.id === id)?.pool_credentials).toEqual([member(b), member(a)]);

    // b stays and keeps its place (the oldest member first), a goes, c comes after it.
    const replaced = await api.put(`/api/v1/${path}/${id}`, { pool_credentials: [c.name, b.name] });
    expect(replaced.status, replaced.text).toBe(200);
    expect(replaced.body.pool_credentials).toEqual([member(b), member(c)]);
    const untouched = await api.put(`/api/v1/${path}/${id}`, { webhook_secret: "whsec-87654321" });
    expect(untouched.body.pool_credentials).toEqual([member(b), member(c)]);
    const cleared = await api.put(`/api/v1/${path}/${id}`, { pool_credentials: [] });
    expect(cleared.status, cleared.text).toBe(200);
    expect(cleared.body.pool_credentials).toEqual([]);
    expect((await api.get(`/api/v1/${path}/${id}`)).body.pool_credentials).toEqual([]);
  });

  it("an entity without a pool shows an empty one", async () => {
    const own = await patCredentials();
    const created = await api.post(`/api/v1/${path}`, { ...body(own.name), ...secret });
    expect(created.status, created.text).toBe(201);
    expect(created.body.pool_credentials).toEqual([]);
  });
});

describe("a requested pool is refused, writing nothing, when", () => {
  it.each([
    [
      "it names unknown credentials",
      async () => ({ names: ["ok", "nope-not-here"], path: "pool_credentials.1", message: /unknown credentials 'nope-not-here'/ }),
    ],
    [
      "it names credentials of another endpoint",
      async () => ({ names: [(await ghesCredentials()).name], path: "pool_credentials.0", message: /are for endpoint 'ghes-/ }),
    ],
    ["it names the entity's own credentials", async () => ({ names: ["own"], path: "pool_credentials.0", message: /own credentials/ })],
    ["it names credentials twice", async () => ({ names: ["ok", "ok"], path: "pool_credentials.1", message: /listed twice/ })],
    [
      "it names more than 10",
      async () => ({ names: Array.from({ length: 11 }, (_, i) => `c${i}`), path: "pool_credentials", message: /at most 10/ }),
    ],
    ["it is not a list of names", async () => ({ names: "ok" as unknown as string[], path: "pool_credentials", message: /array/ })],
  ])("%s (400 invalid_body, on create and on update)", async (_, make) => {
    const [own, ok] = await Promise.all([patCredentials(), patCredentials()]);
    const bad = await make();
    const names = Array.isArray(bad.names) ? bad.names.map((n) => (n === "own" ? own.name : n === "ok" ? ok.name : n)) : bad.names;
    const onCreate = await expectRejectedWithoutWrites(400, () =>
      api.post("/api/v1/organizations", { name: unique("org"), credentials_name: own.name, ...secret, pool_credentials: names }),
    );
    expect(onCreate.body.code).toBe("invalid_body");
    expect(onCreate.body.details).toContainEqual({ path: bad.path, message: expect.stringMatching(bad.message) });

    const org = await api.post("/api/v1/organizations", { name: unique("org"), credentials_name: own.name, ...secret });
    const onUpdate = await expectRejectedWithoutWrites(400, () =>
      api.put(`/api/v1/organizations/${org.body.id}`, { pool_credentials: names }),
    );
    expect(onUpdate.body.details).toContainEqual({ path: bad.path, message: expect.stringMatching(bad.message) });
  });

  it("it names the credentials an update makes the entity's own", async () => {
    const [own, next] = await Promise.all([patCredentials(), patCredentials()]);
    const repo = await seed.repository({ credentials_name: own.name });
    const res = await expectRejectedWithoutWrites(400, () =>
      api.put(`/api/v1/repositories/${repo.id}`, { credentials_name: next.name, pool_credentials: [next.name] }),
    );
    expect(res.body.details).toEqual([{ path: "pool_credentials.0", message: expect.stringMatching(/own credentials/) }]);
  });
});

describe("the entity's own credentials and its pool", () => {
  it("new own credentials taken from the pool leave it; the old own ones do not join it", async () => {
    const [own, a, b] = await Promise.all([patCredentials(), patCredentials(), patCredentials()]);
    const org = await seed.organization({ credentials_name: own.name, pool_credentials: [a.name, b.name] });
    const moved = await api.put(`/api/v1/organizations/${org.id}`, { credentials_name: a.name });
    expect(moved.status, moved.text).toBe(200);
    expect(moved.body).toMatchObject({ credentials_name: a.name, pool_credentials: [member(b)] });
    // The former own credentials may join the pool now.
    const back = await api.put(`/api/v1/organizations/${org.id}`, { pool_credentials: [b.name, own.name] });
    expect(back.body.pool_credentials).toEqual([member(b), member(own)]);
  });
});

describe("deleting credentials a pool holds", () => {
  it("is refused (409 in_use) naming the entities, until the pools let go; deleting an entity lets go of its pool", async () => {
    const [own, pooled] = await Promise.all([patCredentials(), patCredentials()]);
    const org = await seed.organization({ name: unique("octo"), credentials_name: own.name, pool_credentials: [pooled.name] });
    const repo = await seed.repository({ credentials_name: own.name, pool_credentials: [pooled.name] });

    const refused = await expectRejectedWithoutWrites(409, () => api.delete(`/api/v1/github/credentials/${pooled.id}`));
    expect(refused.body.code).toBe("in_use");
    expect(refused.body.error).toContain(`organization ${org.name}`);
    expect(refused.body.error).toContain(`repository octo/${repo.name}`);
    expect(refused.body.error).toContain("pool_credentials");
    expect(refused.body.details).toEqual({
      entities: [],
      pools: expect.arrayContaining([
        { id: org.id, kind: "organization", name: org.name },
        { id: repo.id, kind: "repository", name: `octo/${repo.name}` },
      ]),
      live_runners: 0,
    });

    expect((await api.put(`/api/v1/organizations/${org.id}`, { pool_credentials: [] })).status).toBe(200);
    expect((await api.delete(`/api/v1/repositories/${repo.id}`)).status).toBe(204);
    const rows = await env.DB.prepare("SELECT COUNT(*) AS n FROM entity_credentials WHERE credential_id = ?")
      .bind(pooled.id)
      .first<{ n: number }>();
    expect(rows!.n).toBe(0);
    expect((await api.delete(`/api/v1/github/credentials/${pooled.id}`)).status).toBe(204);
  });

  it("is refused while runners it minted are not deleted: their cleanup at GitHub goes through it", async () => {
    const [own, pooled] = await Promise.all([patCredentials(), patCredentials()]);
    const repo = await seed.repository({ credentials_name: own.name, pool_credentials: [pooled.name] });
    const ss = await seed.scaleSet(`repositories/${repo.id}`);
    const runner = await insertInstance(ss.id, { jit_credentials_id: pooled.id });
    expect((await api.put(`/api/v1/repositories/${repo.id}`, { pool_credentials: [] })).status).toBe(200);

    const refused = await expectRejectedWithoutWrites(409, () => api.delete(`/api/v1/github/credentials/${pooled.id}`));
    expect(refused.body.error).toMatch(/1 runner\(s\) they minted are not deleted yet/);
    expect(refused.body.details).toEqual({ entities: [], pools: [], live_runners: 1 });

    await env.DB.prepare("UPDATE instances SET status = 'deleted', deleted_at = ?2 WHERE id = ?1").bind(runner.id, Date.now()).run();
    expect((await api.delete(`/api/v1/github/credentials/${pooled.id}`)).status).toBe(204);
  });
});

describe("the record of a pool change", () => {
  it("the audit trail keeps the pool the update asked for", async () => {
    const [own, a] = await Promise.all([patCredentials(), patCredentials()]);
    const org = await seed.organization({ credentials_name: own.name });
    expect((await api.put(`/api/v1/organizations/${org.id}`, { pool_credentials: [a.name] })).status).toBe(200);
    const row = await env.DB.prepare("SELECT resource, changes FROM audit_log ORDER BY id DESC LIMIT 1").first<{
      resource: string;
      changes: string;
    }>();
    expect(row!.resource).toBe(org.id);
    expect(JSON.parse(row!.changes)).toEqual({ body: { pool_credentials: [a.name] } });
  });

  it("the OpenAPI document describes pool_credentials on create, update and every view", async () => {
    const doc = (await api.get("/api/v1/openapi.json", { token: null })).body;
    const schemas = doc.components.schemas;
    for (const view of ["Repository", "Organization", "Enterprise"]) {
      expect(schemas[view].properties.pool_credentials).toMatchObject({
        type: "array",
        items: { $ref: "#/components/schemas/PoolCredential" },
      });
      expect(schemas[view].required).toContain("pool_credentials");
    }
    for (const input of ["CreateRepository", "CreateOrganization", "CreateEnterprise", "UpdateEntity", "UpdateRepositoryOrOrganization"]) {
      expect(schemas[input].properties.pool_credentials).toMatchObject({ type: "array", maxItems: 10 });
      expect(schemas[input].required ?? []).not.toContain("pool_credentials");
    }
  });
});
