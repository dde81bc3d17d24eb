import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { api, expectRejectedWithoutWrites, insertInstance, seed, unique } from "./helpers";

const minimal = (provider: string, over: Record<string, unknown> = {}) => ({
  name: unique("linux"),
  provider_name: provider,
  labels: ["self-hosted", "Linux", "X64", "linux"],
  max_runners: 10,
  image: "ubuntu:24.04",
  flavor: "m1.small",
  ...over,
});

async function setup() {
  const repo = await seed.repository();
  const provider = await seed.provider();
  return { repo, provider, base: `/api/v1/repositories/${repo.id}/scalesets` };
}

describe("scale sets", () => {
  it("creates one with defaults and normalized labels, and shows it everywhere", async () => {
    const { repo, provider, base } = await setup();
    const res = await api.post(base, minimal(provider.name));
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      entity: { kind: "repository", id: repo.id, name: `octo/${repo.name}` },
      endpoint: "github.com",
      provider_name: provider.name,
      labels: ["linux", "self-hosted", "x64"],
      min_idle_runners: 0,
      max_runners: 10,
      os_type: "linux",
      os_arch: "amd64",
      bootstrap_timeout: 20,
      runner_prefix: "edgerunner",
      runner_group: "",
      extra_specs: {},
      enabled: true,
      priority: 0,
    });
    const { id } = res.body;
    const shown = (await api.get(`/api/v1/scalesets/${id}`)).body;
    expect(shown).toMatchObject(res.body);
    expect(shown.status).toMatchObject({ scale_set_id: id, create_backoff: { failures: 0, hard_limited_at: null } });
    expect((await api.get(base)).body).toEqual([res.body]);
    expect((await api.get("/api/v1/scalesets")).body.map((s: any) => s.id)).toContain(id);
    expect((await api.get(`/api/v1/scalesets/${id}/instances`)).body).toEqual([]);
  });

  it("creates one for organizations and enterprises", async () => {
    const provider = await seed.provider();
    const org = await seed.organization();
    const creds = await seed.patCredentials();
    const ent = (
      await api.post("/api/v1/enterprises", { name: unique("ent"), credentials_name: creds.name, webhook_secret: "whsec-12345678" })
    ).body;
    const a = await api.post(`/api/v1/organizations/${org.id}/scalesets`, minimal(provider.name));
    const b = await api.post(
      `/api/v1/enterprises/${ent.id}/scalesets`,
      minimal(provider.name, { extra_specs: { disk_gb: 40, tags: ["a"] } }),
    );
    expect(a.status).toBe(201);
    expect(a.body.entity).toEqual({ kind: "organization", id: org.id, name: org.name });
    expect(b.status).toBe(201);
    expect(b.body).toMatchObject({ entity: { kind: "enterprise", id: ent.id }, extra_specs: { disk_gb: 40, tags: ["a"] } });
  });

  it("accepts every field", async () => {
    const { provider, base } = await setup();
    const full = minimal(provider.name, {
      min_idle_runners: 2,
      os_type: "windows",
      os_arch: "arm64",
      bootstrap_timeout: 45,
      runner_prefix: "win",
      runner_group: "default",
      extra_specs: { zone: "a" },
      enabled: false,
      priority: 7,
    });
    const res = await api.post(base, full);
    expect(res.status).toBe(201);
    const { labels: _l, provider_name: _p, ...rest } = full;
    expect(res.body).toMatchObject(rest);
  });

  it.each([
    ["no labels", { labels: [] }, "labels"],
    ["blank labels", { labels: ["  "] }, "labels.0"],
    ["min idle above max", { min_idle_runners: 11 }, "min_idle_runners"],
    ["zero max runners", { max_runners: 0 }, "max_runners"],
    ["fractional max runners", { max_runners: 2.5 }, "max_runners"],
    ["a string max", { max_runners: "10" }, "max_runners"],
    ["an unknown os", { os_type: "plan9" }, "os_type"],
    ["an unknown arch", { os_arch: "sparc" }, "os_arch"],
    ["extra specs that are not an object", { extra_specs: [1, 2] }, "extra_specs"],
    ["a zero bootstrap timeout", { bootstrap_timeout: 0 }, "bootstrap_timeout"],
    ["a bad runner prefix", { runner_prefix: "no spaces" }, "runner_prefix"],
    ["a misspelled field", { min_idle_runner: 1 }, "(root)"],
    ["no image", { image: undefined }, "image"],
  ])("rejects %s without writing", async (_, over, field) => {
    const { provider, base } = await setup();
    const res = await expectRejectedWithoutWrites(400, () => api.post(base, minimal(provider.name, over)));
    expect(res.body.details.map((d: any) => d.path)).toContain(field);
  });

  it("rejects an unknown provider (400), unknown entity (404) and a duplicate name (409)", async () => {
    const { provider, base } = await setup();
    const res = await expectRejectedWithoutWrites(400, () => api.post(base, minimal("nope")));
    expect(res.body.details).toEqual([{ path: "provider_name", message: "unknown provider 'nope'" }]);
    await expectRejectedWithoutWrites(404, () =>
      api.post("/api/v1/repositories/3b241101-e2bb-4255-8caf-4136c566a962/scalesets", minimal(provider.name)),
    );
    const org = await seed.organization();
    await expectRejectedWithoutWrites(404, () => api.post(`/api/v1/repositories/${org.id}/scalesets`, minimal(provider.name)));
    const body = minimal(provider.name);
    expect((await api.post(base, body)).status).toBe(201);
    await expectRejectedWithoutWrites(409, () => api.post(base, { ...body, labels: ["other"] }));
  });

  it("allows the same name under another entity", async () => {
    const a = await setup();
    const b = await setup();
    const body = minimal(a.provider.name);
    expect((await api.post(a.base, body)).status).toBe(201);
    expect((await api.post(b.base, body)).status).toBe(201);
  });

  it("updates only the fields given", async () => {
    const { provider, base } = await setup();
    const created = (await api.post(base, minimal(provider.name, { min_idle_runners: 1 }))).body;
    const other = await seed.provider();
    const res = await api.put(`/api/v1/scalesets/${created.id}`, {
      enabled: false,
      max_runners: 3,
      labels: ["GPU", "self-hosted"],
      provider_name: other.name,
      name: "renamed",
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      enabled: false,
      max_runners: 3,
      min_idle_runners: 1,
      labels: ["gpu", "self-hosted"],
      provider_name: other.name,
      name: "renamed",
      image: "ubuntu:24.04",
    });
  });

  it("rejects updates that break the limits, unknown providers, taken names and unknown ids, without writing", async () => {
    const { provider, base } = await setup();
    const a = (await api.post(base, minimal(provider.name, { min_idle_runners: 2 }))).body;
    const b = (await api.post(base, minimal(provider.name))).body;
    let res = await expectRejectedWithoutWrites(400, () => api.put(`/api/v1/scalesets/${a.id}`, { max_runners: 1 }));
    expect(res.body.details[0].path).toBe("min_idle_runners");
    await expectRejectedWithoutWrites(400, () => api.put(`/api/v1/scalesets/${a.id}`, { min_idle_runners: 5, max_runners: 4 }));
    await expectRejectedWithoutWrites(400, () => api.put(`/api/v1/scalesets/${a.id}`, { provider_name: "nope" }));
    await expectRejectedWithoutWrites(400, () => api.put(`/api/v1/scalesets/${a.id}`, { entity_id: b.id }));
    res = await expectRejectedWithoutWrites(409, () => api.put(`/api/v1/scalesets/${a.id}`, { name: b.name }));
    await expectRejectedWithoutWrites(404, () => api.put("/api/v1/scalesets/3b241101-e2bb-4255-8caf-4136c566a962", { enabled: true }));
  });

  it("refuses to switch provider while instances are live (409)", async () => {
    const { provider, base } = await setup();
    const ss = (await api.post(base, minimal(provider.name))).body;
    await insertInstance(ss.id);
    const other = await seed.provider();
    await expectRejectedWithoutWrites(409, () => api.put(`/api/v1/scalesets/${ss.id}`, { provider_name: other.name }));
  });

  it("refuses to delete with live instances (409), then deletes with its history once they are gone", async () => {
    const { provider, base } = await setup();
    const ss = (await api.post(base, minimal(provider.name))).body;
    const live = await insertInstance(ss.id, { status: "pending_delete" });
    const gone = await insertInstance(ss.id, {
      status: "deleted",
      runner_status: "terminated",
      transitions: JSON.stringify([{ at: Date.now(), field: "status", from: "deleting", to: "deleted", reason: "test" }]),
    });
    await env.DB.prepare(
      "INSERT INTO jobs (id, run_id, repository, owner, labels, status, scale_set_id, created_at, updated_at) VALUES (424242, 1, 'octo/x', 'octo', '[]', 'completed', ?, 0, 0)",
    )
      .bind(ss.id)
      .run();

    const res = await expectRejectedWithoutWrites(409, () => api.delete(`/api/v1/scalesets/${ss.id}`));
    expect(res.body.details.instances).toEqual([{ name: live.name, status: "pending_delete" }]);

    const listed = (await api.get(`/api/v1/scalesets/${ss.id}/instances`)).body;
    expect(listed.map((i: any) => i.name).sort()).toEqual([live.name, gone.name].sort());

    await env.DB.prepare("UPDATE instances SET status = 'deleted', deleted_at = ?2 WHERE id = ?1").bind(live.id, Date.now()).run();
    expect((await api.delete(`/api/v1/scalesets/${ss.id}`)).status).toBe(204);
    expect((await api.get(`/api/v1/scalesets/${ss.id}`)).status).toBe(404);
    const left = await env.DB.prepare(
      "SELECT (SELECT count(*) FROM instances WHERE scale_set_id = ?1) AS i, (SELECT scale_set_id FROM jobs WHERE id = 424242) AS j",
    )
      .bind(ss.id)
      .first();
    expect(left).toEqual({ i: 0, j: null });
  });
});
