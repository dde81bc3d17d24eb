import { env, exports } from "cloudflare:workers";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { SECRET_FIELD } from "../../src/audit/redact";
import { SESSION_COOKIE } from "../../src/ui/session";
import pkcs1 from "../fixtures/app-key-pkcs1.pem?raw";
import { ADMIN_TOKEN, api, expectErrorShape, seed, unique } from "./helpers";

const ORIGIN = "https://edgerunner.test";

/** A dashboard session cookie, logged in with the admin token. */
async function dashboardCookie(): Promise<string> {
  const login = await exports.default.fetch(
    new Request(`${ORIGIN}/ui/login`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: `token=${ADMIN_TOKEN}`,
      redirect: "manual",
    }),
  );
  return `${SESSION_COOKIE}=${new RegExp(`${SESSION_COOKIE}=([^;]+)`).exec(login.headers.get("set-cookie") ?? "")![1]!}`;
}

const auditRows = async () => (await env.DB.prepare("SELECT * FROM audit_log ORDER BY id").all<Record<string, any>>()).results;
const lastAudit = async () => (await auditRows()).at(-1);

beforeEach(() => {
  vi.spyOn(console, "log").mockImplementation(() => {});
  vi.spyOn(console, "warn").mockImplementation(() => {});
});
afterEach(() => vi.restoreAllMocks());

describe("audit trail", () => {
  it("records a write: when, who, route, resource, the change with its secret redacted, the status and the request id", async () => {
    const name = unique("prov");
    const secret = `provider-secret-${unique("s")}`;
    const before = Date.now();
    const res = await api.post("/api/v1/providers", { name, url: "https://shim.example.com", secret });
    expect(res.status).toBe(201);
    const row = await lastAudit();
    expect(row).toMatchObject({
      actor: "admin_token",
      via: "api",
      method: "POST",
      route: "/api/v1/providers",
      path: "/api/v1/providers",
      resource: res.body.id,
      status: 201,
      request_id: res.headers.get("x-request-id"),
    });
    expect(row!.at).toBeGreaterThanOrEqual(before);
    expect(JSON.parse(row!.changes)).toEqual({ body: { name, url: "https://shim.example.com", secret: "[redacted]" } });

    const put = await api.put(`/api/v1/providers/${name}`, { description: "moved" });
    expect(put.status).toBe(200);
    expect(await lastAudit()).toMatchObject({
      method: "PUT",
      route: "/api/v1/providers/:name",
      resource: name,
      status: 200,
      changes: '{"body":{"description":"moved"}}',
    });
  });

  it("records failed writes with their status, and reads not at all", async () => {
    const provider = await seed.provider();
    const count = (await auditRows()).length;
    expect((await api.get("/api/v1/providers")).status).toBe(200);
    expect((await api.get(`/api/v1/providers/${provider.name}`)).status).toBe(200);
    expect((await auditRows()).length).toBe(count);
    const clash = await api.post("/api/v1/providers", {
      name: provider.name,
      url: "https://shim.example.com",
      secret: "another-secret-long-enough",
    });
    expect(clash.status).toBe(409);
    // A refusal keeps what the answer said, not what was sent (audit-refusals.test.ts).
    expect(await lastAudit()).toMatchObject({
      method: "POST",
      status: 409,
      request_id: clash.body.request_id,
      changes: null,
      refusal: JSON.stringify({ code: "conflict", error: clash.body.error }),
    });
    const bad = await api.post("/api/v1/providers", { name: "bad name" });
    expect(bad.status).toBe(400);
    expect(await lastAudit()).toMatchObject({
      status: 400,
      request_id: bad.body.request_id,
      refusal: '{"code":"invalid_body","error":"invalid request body"}',
    });
    const missing = await api.delete(`/api/v1/instances/${unique("nobody")}?force=true`);
    expect(missing.status).toBe(404);
    expect(await lastAudit()).toMatchObject({
      method: "DELETE",
      route: "/api/v1/instances/:name",
      status: 404,
      changes: null,
      refusal: JSON.stringify({ code: "not_found", error: missing.body.error }),
    });
  });

  it("names named tokens, records a read token's refused write, and not an unauthenticated one", async () => {
    const { token, name } = (await api.post("/api/v1/tokens", { name: unique("ro"), scope: "read" })).body;
    const tokenCreated = await lastAudit();
    expect(tokenCreated).toMatchObject({
      route: "/api/v1/tokens",
      status: 201,
      changes: JSON.stringify({ body: { name, scope: "read" } }),
    });
    const refused = await api.post(
      "/api/v1/providers",
      { name: unique("p"), url: "https://s.example.com", secret: "a-provider-secret-long-enough" },
      { token },
    );
    expect(refused.status).toBe(403);
    expect(await lastAudit()).toMatchObject({ actor: `token:${name}`, method: "POST", status: 403 });
    const count = (await auditRows()).length;
    expect((await api.post("/api/v1/providers", {}, { token: null })).status).toBe(401);
    expect((await api.post("/api/v1/providers", {}, { token: "wrong" })).status).toBe(401);
    expect((await auditRows()).length).toBe(count);
    // The token's value is in the creation's answer only, never in the trail.
    expect(JSON.stringify(await auditRows())).not.toContain(token);
  });

  it("never stores a credential's private key or token, a webhook secret or a provider secret", async () => {
    const webhookSecret = `whsec-${unique("app")}-0123456789`;
    const pat = `ghp_${unique("pat").replace(/-/g, "")}abcdefghijklmnop`;
    const appRes = await api.post("/api/v1/github/credentials", {
      name: unique("app"),
      auth_type: "app",
      app: { app_id: 1234, installation_id: 5678, private_key: pkcs1, webhook_secret: webhookSecret },
    });
    expect(appRes.status, appRes.text).toBe(201);
    const patRes = await api.post("/api/v1/github/credentials", { name: unique("pat"), auth_type: "pat", pat: { oauth2_token: pat } });
    expect(patRes.status).toBe(201);
    const newKey = await api.put(`/api/v1/github/credentials/${appRes.body.id}`, {
      app: { private_key: pkcs1, webhook_secret: `${webhookSecret}-2` },
    });
    expect(newKey.status, newKey.text).toBe(200);
    const entitySecret = `whsec-${unique("entity")}`;
    const repo = await seed.repository({ credentials_name: patRes.body.name, webhook_secret: entitySecret });
    const provSecret = `provider-secret-${unique("p")}`;
    const prov = await seed.provider({ secret: provSecret });
    expect((await api.put(`/api/v1/providers/${prov.name}`, { secret: `${provSecret}-new` })).status).toBe(200);
    // A failed write carrying a secret is recorded without it too.
    expect((await api.post("/api/v1/github/credentials", { name: "bad name", auth_type: "pat", pat: { oauth2_token: pat } })).status).toBe(
      400,
    );

    const trail = JSON.stringify(await auditRows());
    const keyBody = pkcs1.split("\n").filter((l) => l && !l.startsWith("-----"))[1]!;
    for (const secret of [keyBody, "PRIVATE KEY", webhookSecret, pat, entitySecret, provSecret]) expect(trail).not.toContain(secret);
    expect(trail).toContain(repo.id);
    expect(trail).toContain("[redacted]");
  });

  it("keeps the answer when the audit insert fails, and logs the failure", async () => {
    const errors = vi.spyOn(console, "error").mockImplementation(() => {});
    await env.DB.prepare("ALTER TABLE audit_log RENAME TO audit_log_away").run();
    try {
      const res = await api.post("/api/v1/providers", {
        name: unique("p"),
        url: "https://s.example.com",
        secret: "a-provider-secret-long-enough",
      });
      expect(res.status).toBe(201);
      expect(errors.mock.calls.map((c) => JSON.parse(String(c[0])))).toContainEqual(
        expect.objectContaining({ event: "audit_write_failed", status: 201 }),
      );
    } finally {
      await env.DB.prepare("ALTER TABLE audit_log_away RENAME TO audit_log").run();
    }
  });

  it("records dashboard actions as the dashboard's user", async () => {
    const scaleSet = await seed.scaleSet("repositories/" + (await seed.repository()).id);
    const cookie = await dashboardCookie();
    const page = await (await exports.default.fetch(new Request(`${ORIGIN}/ui/scalesets/${scaleSet.id}`, { headers: { cookie } }))).text();
    const csrf = /name="_csrf" value="([^"]+)"/.exec(page)![1]!;
    const res = await exports.default.fetch(
      new Request(`${ORIGIN}/ui/scalesets/${scaleSet.id}/enabled`, {
        method: "POST",
        headers: { cookie, "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ _csrf: csrf, enabled: "false" }).toString(),
        redirect: "manual",
      }),
    );
    expect(res.status).toBe(303);
    expect(await lastAudit()).toMatchObject({
      actor: "dashboard",
      via: "dashboard",
      method: "PUT",
      route: "/api/v1/scalesets/:id",
      resource: scaleSet.id,
      status: 200,
      changes: '{"body":{"enabled":false}}',
    });
  });
});

describe("GET /api/v1/audit", () => {
  it("pages newest first and filters by actor, resource, method, status and time", async () => {
    const start = new Date().toISOString();
    const { token, name } = (await api.post("/api/v1/tokens", { name: unique("adm"), scope: "admin" })).body;
    const a = await seed.provider();
    const b = await api.post(
      "/api/v1/providers",
      { name: unique("prov"), url: "https://s.example.com", secret: "a-provider-secret-long-enough" },
      { token },
    );
    expect((await api.put(`/api/v1/providers/${a.name}`, { description: "d" }, { token })).status).toBe(200);
    expect((await api.delete(`/api/v1/providers/${b.body.name}`)).status).toBe(204);
    expect((await api.delete(`/api/v1/providers/${b.body.name}`)).status).toBe(404);

    const all = await api.get(`/api/v1/audit?since=${encodeURIComponent(start)}`);
    expect(all.status).toBe(200);
    expect(all.body.entries.map((e: any) => [e.method, e.status])).toEqual([
      ["DELETE", 404],
      ["DELETE", 204],
      ["PUT", 200],
      ["POST", 201],
      ["POST", 201],
      ["POST", 201],
    ]);
    expect(all.body.entries[2]).toMatchObject({
      actor: `token:${name}`,
      via: "api",
      resource: a.name,
      changes: { body: { description: "d" } },
    });
    expect(all.body.next_cursor).toBeNull();

    const q = async (query: string) =>
      (await api.get(`/api/v1/audit?since=${encodeURIComponent(start)}&${query}`)).body.entries.map((e: any) => e.id);
    const ids = all.body.entries.map((e: any) => e.id);
    expect(await q(`actor=${encodeURIComponent(`token:${name}`)}`)).toEqual([ids[2], ids[3]]);
    expect(await q("method=DELETE")).toEqual([ids[0], ids[1]]);
    expect(await q("status=404")).toEqual([ids[0]]);
    expect(await q(`resource=${a.name}`)).toEqual([ids[2]]);
    expect(await q(`resource=${b.body.id}`)).toEqual([ids[3]]);
    expect(await q(`resource=${encodeURIComponent(`/api/v1/providers/${b.body.name}`)}`)).toEqual([ids[0], ids[1]]);
    expect(await q(`resource=${encodeURIComponent("/api/v1/tokens")}`)).toEqual([ids[5]]);
    expect(await q(`until=${encodeURIComponent(start)}`)).toEqual([]);
    // A prefix is taken literally: LIKE's wildcards in it match only themselves.
    expect(await q(`resource=${encodeURIComponent("/api/v1/prov%")}`)).toEqual([]);
    expect(await q(`resource=${encodeURIComponent("/api/v1/provider_")}`)).toEqual([]);

    const first = await api.get(`/api/v1/audit?since=${encodeURIComponent(start)}&limit=4`);
    expect(first.body.entries.map((e: any) => e.id)).toEqual(ids.slice(0, 4));
    const second = await api.get(`/api/v1/audit?since=${encodeURIComponent(start)}&limit=4&cursor=${first.body.next_cursor}`);
    expect(second.body.entries.map((e: any) => e.id)).toEqual(ids.slice(4));
    expect(second.body.next_cursor).toBeNull();
  });

  it("refuses bad filters with 400", async () => {
    for (const query of ["method=GET", "status=abc", "status=99", "since=yesterday", "limit=0", "limit=501", "cursor=-1", "actor="]) {
      const res = await api.get(`/api/v1/audit?${query}`);
      expect(res.status, query).toBe(400);
      expectErrorShape(res, query);
      expect(res.body.code).toBe("invalid_parameter");
    }
  });
});

describe("the dashboard's audit page", () => {
  it("lists entries newest first, filters like the API, pages, and shows what was sent as text", async () => {
    const marked = await seed.provider({ description: "<b>bold</b>" });
    // Refused: shown as what the answer said, never what was sent.
    const name = `${unique("p")}<i>`;
    await api.post("/api/v1/providers", { name, url: "https://s.example.com", secret: "a-provider-secret-long-enough" });
    const prov = await seed.provider();
    const cookie = await dashboardCookie();
    const page = async (query = "") => {
      const res = await exports.default.fetch(new Request(`${ORIGIN}/ui/audit${query}`, { headers: { cookie }, redirect: "manual" }));
      return { status: res.status, html: await res.text() };
    };
    expect((await exports.default.fetch(new Request(`${ORIGIN}/ui/audit`, { redirect: "manual" }))).status).toBe(303);
    const all = await page();
    expect(all.status).toBe(200);
    expect(all.html).toContain('href="/ui/audit"');
    expect(all.html.indexOf(prov.id)).toBeGreaterThan(-1);
    // The description is shown escaped, never as markup.
    expect(all.html).not.toContain("<b>");
    expect(all.html).toContain("&lt;b&gt;bold&lt;/b&gt;");
    expect(all.html).not.toContain("a-provider-secret-long-enough");
    expect(all.html).not.toContain("&lt;i&gt;");
    const only = await page(`?resource=${prov.id}`);
    expect(only.html).toContain(prov.id);
    expect(only.html).not.toContain("&lt;b&gt;");
    const refused = await page("?status=400&method=POST");
    expect(refused.html).toContain("refused: invalid_body: invalid request body");
    expect(refused.html).not.toContain(prov.id);
    expect(refused.html).not.toContain(marked.id);

    // More than a page: a link to the older entries, keeping the filter.
    const actor = unique("bulk");
    await env.DB.batch(
      Array.from({ length: 101 }, (_, i) =>
        env.DB.prepare(
          "INSERT INTO audit_log (at, actor, via, method, route, path, resource, status, request_id) VALUES (?, ?, 'api', 'POST', '/r', '/r', ?, 201, 'rid')",
        ).bind(Date.now(), actor, `res-${i}`),
      ),
    );
    const first = await page(`?actor=${actor}`);
    expect(first.html).toContain("res-100");
    expect(first.html).not.toContain("res-0<");
    const older = /href="(\/ui\/audit\?[^"]+)">Older entries/.exec(first.html)![1]!.replaceAll("&amp;", "&");
    const second = await page(older.slice("/ui/audit".length));
    expect(second.html).toContain("res-0<");
    expect(second.html).not.toContain("res-1<");
    expect(second.html).not.toContain("Older entries");
  });
});

describe("what the trail redacts", () => {
  /** Every property name of every request body in the OpenAPI document. */
  function bodyFields(doc: any): Set<string> {
    const names = new Set<string>();
    const seen = new Set<unknown>();
    const walk = (schema: any) => {
      if (!schema || typeof schema !== "object" || seen.has(schema)) return;
      seen.add(schema);
      if (schema.$ref) return walk(doc.components.schemas[schema.$ref.split("/").pop()]);
      for (const [k, v] of Object.entries(schema.properties ?? {})) {
        names.add(k);
        walk(v);
      }
      for (const key of ["anyOf", "oneOf", "allOf"]) for (const s of schema[key] ?? []) walk(s);
      walk(schema.items);
      walk(schema.additionalProperties);
    };
    for (const ops of Object.values(doc.paths) as any[])
      for (const op of Object.values(ops) as any[]) walk(op?.requestBody?.content?.["application/json"]?.schema);
    return names;
  }

  // Fields of request bodies that are not secrets: a new field must be added here or be matched by
  // SECRET_FIELD, so a new secret cannot reach the audit trail by being forgotten.
  const NOT_SECRET = new Set(
    (
      "name description base_url api_base_url upload_base_url ca_cert_bundle endpoint auth_type app_id installation_id app pat credentials_name pool_credentials owner enterprise url timeout_seconds provider_name labels max_runners min_idle_runners image flavor os_type os_arch runner_prefix runner_group enabled extra_specs scope expires_at bootstrap_timeout_minutes bootstrap_timeout insecure_ssl jit_config_enabled use_parent_scale_sets priority intake jit_config_timing boot_time_seconds max_runner_lifetime_seconds runner_lifetime_hard_cap_seconds max_machine_hours_per_day schedules cron timezone prewarm forge runner_download_url runner_download_sha256 " +
      // a shaped scale set's bounds (src/shapes/shape-bounds.ts)
      "shape key cpu ram_gb disk_gb min max architectures families spot max_gpus images default_image " +
      // the provider and runner callbacks (signed by the shim, or with the instance token: not audited, listed all the same)
      "address addresses agent_id error instance_name message operation_id os_name os_version provider_fault provider_id result retryable status type"
    ).split(" "),
  );

  it("treats every request body field as either a secret or known not to be one", async () => {
    const doc = (await api.get("/api/v1/openapi.json")).body;
    const fields = [...bodyFields(doc)];
    const secret = fields.filter((f) => SECRET_FIELD.test(f)).sort();
    expect(secret).toEqual(["oauth2_token", "private_key", "secret", "webhook_secret"]);
    expect(fields.filter((f) => !SECRET_FIELD.test(f) && !NOT_SECRET.has(f)).sort()).toEqual([]);
  });
});
