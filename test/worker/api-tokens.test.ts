import { env } from "cloudflare:workers";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { hashApiToken, newApiToken } from "../../src/auth/api-token";
import { ADMIN_TOKEN, type ApiResponse, api, expectErrorShape, expectRejectedWithoutWrites, seed, unique } from "./helpers";

const ADMIN_FAILURES = 30; // wrangler.toml's ADMIN_AUTH_LIMITER
const freshIp = () => `10.${[0, 0, 0].map(() => Math.floor(Math.random() * 254) + 1).join(".")}`;

async function createToken(scope: "read" | "admin", over: Record<string, unknown> = {}, token = ADMIN_TOKEN) {
  const res = await api.post("/api/v1/tokens", { name: unique(`t-${scope}`), scope, ...over }, { token });
  expect(res.status, res.text).toBe(201);
  return res.body as { id: string; name: string; token: string; scope: string; created_by: string };
}

const storedRow = (id: string) => env.DB.prepare("SELECT * FROM api_tokens WHERE id = ?").bind(id).first<Record<string, any>>();

function expectForbidden(res: ApiResponse) {
  expect(res.status, res.text).toBe(403);
  expectErrorShape(res);
  expect(res.body.code).toBe("forbidden");
}

beforeEach(() => {
  vi.spyOn(console, "log").mockImplementation(() => {});
  vi.spyOn(console, "warn").mockImplementation(() => {});
});
afterEach(() => vi.restoreAllMocks());

describe("named API tokens", () => {
  it("shows a new token once, with a prefix scanners know, and stores only its SHA-256", async () => {
    const created = await createToken("read");
    expect(created.token).toMatch(/^edr_[A-Za-z0-9_-]{43}$/);
    expect(created).toMatchObject({ scope: "read", created_by: "admin_token", expires_at: null, last_used_at: null, revoked_at: null });
    const row = await storedRow(created.id);
    expect(row!.token_hash).toBe(await hashApiToken(created.token));
    expect(JSON.stringify(row)).not.toContain(created.token);

    const list = await api.get("/api/v1/tokens");
    expect(list.status).toBe(200);
    const listed = list.body.find((t: any) => t.id === created.id);
    expect(Object.keys(listed).sort()).toEqual([
      "created_at",
      "created_by",
      "expires_at",
      "id",
      "last_used_at",
      "name",
      "revoked_at",
      "scope",
    ]);
    expect(list.text).not.toContain(created.token);
    expect(list.text).not.toContain(row!.token_hash);
  });

  it("lets a read token GET admin routes and /metrics, and refuses its writes with 403, changing nothing", async () => {
    const { token } = await createToken("read");
    expect((await api.get("/api/v1/providers", { token })).status).toBe(200);
    expect((await api.get("/api/v1/jobs", { token })).status).toBe(200);
    expect((await api.get("/api/v1/audit", { token })).status).toBe(200);
    expect((await api.get("/metrics", { token })).status).toBe(200);
    const provider = await seed.provider();
    const body = { name: unique("p"), url: "https://shim.example.com", secret: "a-provider-secret-long-enough" };
    expectForbidden(await expectRejectedWithoutWrites(403, () => api.post("/api/v1/providers", body, { token })));
    expectForbidden(
      await expectRejectedWithoutWrites(403, () => api.put(`/api/v1/providers/${provider.name}`, { description: "x" }, { token })),
    );
    expectForbidden(await expectRejectedWithoutWrites(403, () => api.delete(`/api/v1/providers/${provider.name}`, { token })));
    expect((await api.get(`/api/v1/providers/${provider.name}`, { token })).body.description).toBe(provider.description);
  });

  it("lets only an admin manage tokens, listing included", async () => {
    const { token: read, id } = await createToken("read");
    expectForbidden(await api.get("/api/v1/tokens", { token: read }));
    expectForbidden(await api.post("/api/v1/tokens", { name: unique("x"), scope: "read" }, { token: read }));
    expectForbidden(await api.delete(`/api/v1/tokens/${id}`, { token: read }));
    const { token: admin, name: adminName } = await createToken("admin");
    const made = await createToken("read", {}, admin);
    expect(made.created_by).toBe(`token:${adminName}`);
    expect(
      (
        await api.post(
          "/api/v1/providers",
          { name: unique("p"), url: "https://s.example.com", secret: "a-provider-secret-long-enough" },
          { token: admin },
        )
      ).status,
    ).toBe(201);
  });

  it("keeps ADMIN_TOKEN working as full admin", async () => {
    expect((await api.get("/api/v1/tokens")).status).toBe(200);
    expect((await api.post("/api/v1/tokens", { name: unique("a"), scope: "admin" })).status).toBe(201);
  });

  it("refuses a token from the request after its revocation; the row stays, marked, and the name is free again", async () => {
    const created = await createToken("admin");
    expect((await api.get("/api/v1/providers", { token: created.token })).status).toBe(200);
    expect((await api.delete(`/api/v1/tokens/${created.id}`)).status).toBe(204);
    const refused = await api.get("/api/v1/providers", { token: created.token });
    expect(refused.status).toBe(401);
    expectErrorShape(refused);
    expect(refused.body.details).toEqual({ reason: "token revoked" });
    const listed = (await api.get("/api/v1/tokens")).body.find((t: any) => t.id === created.id);
    expect(listed.revoked_at).not.toBeNull();
    // Revoking twice keeps the first time; the name can be used by a new token.
    expect((await api.delete(`/api/v1/tokens/${created.id}`)).status).toBe(204);
    expect((await api.get("/api/v1/tokens")).body.find((t: any) => t.id === created.id).revoked_at).toBe(listed.revoked_at);
    expect((await api.post("/api/v1/tokens", { name: created.name, scope: "read" })).status).toBe(201);
  });

  it("refuses an expired token and one nobody issued", async () => {
    const token = newApiToken();
    await env.DB.prepare(
      "INSERT INTO api_tokens (id, name, scope, token_hash, created_at, created_by, expires_at) VALUES (?, ?, 'admin', ?, ?, 'test', ?)",
    )
      .bind(crypto.randomUUID(), unique("old"), await hashApiToken(token), Date.now() - 10_000, Date.now() - 1)
      .run();
    const expired = await api.get("/api/v1/providers", { token });
    expect(expired.status).toBe(401);
    expect(expired.body.details).toEqual({ reason: "token expired" });
    const unknown = await api.get("/api/v1/providers", { token: newApiToken() });
    expect(unknown.status).toBe(401);
    expect(unknown.body.details).toEqual({ reason: "invalid token" });
    expect(unknown.headers.get("www-authenticate")).toContain('error="invalid_token"');
  });

  it("accepts a token until its expires_at", async () => {
    const future = new Date(Date.now() + 3_600_000).toISOString();
    const created = await createToken("read", { expires_at: future });
    expect(created).toMatchObject({ expires_at: future });
    expect((await api.get("/api/v1/providers", { token: created.token })).status).toBe(200);
  });

  it("records the last use, writing it at most once a minute", async () => {
    const created = await createToken("read");
    expect((await api.get("/api/v1/providers", { token: created.token })).status).toBe(200);
    const first = (await storedRow(created.id))!.last_used_at;
    expect(first).toEqual(expect.any(Number));
    // Pretend the write happened 30 s ago: a use now does not write again…
    await env.DB.prepare("UPDATE api_tokens SET last_used_at = ? WHERE id = ?")
      .bind(first - 30_000, created.id)
      .run();
    expect((await api.get("/api/v1/providers", { token: created.token })).status).toBe(200);
    expect((await storedRow(created.id))!.last_used_at).toBe(first - 30_000);
    const listed = (await api.get("/api/v1/tokens")).body.find((t: any) => t.id === created.id);
    expect(listed.last_used_at).toBe(new Date(first - 30_000).toISOString());
  });

  it("refuses bad input with 400 and a taken name with 409, creating nothing", async () => {
    const taken = await createToken("read");
    for (const body of [
      {},
      { name: unique("n") },
      { name: unique("n"), scope: "write" },
      { name: "has space", scope: "read" },
      { name: unique("n"), scope: "read", expires_at: "tomorrow" },
      { name: unique("n"), scope: "read", expires_at: new Date(Date.now() - 60_000).toISOString() },
      { name: unique("n"), scope: "read", token: "edr_chosen" },
    ]) {
      const res = await expectRejectedWithoutWrites(400, () => api.post("/api/v1/tokens", body));
      expect(res.body.code, JSON.stringify(body)).toBe("invalid_body");
    }
    const before = (await api.get("/api/v1/tokens")).body.length;
    const clash = await api.post("/api/v1/tokens", { name: taken.name, scope: "admin" });
    expect(clash.status).toBe(409);
    expectErrorShape(clash);
    expect((await api.get("/api/v1/tokens")).body.length).toBe(before);
    expect((await api.delete("/api/v1/tokens/not-a-uuid")).status).toBe(400);
    const missing = await api.delete(`/api/v1/tokens/${crypto.randomUUID()}`);
    expect(missing.status).toBe(404);
    expectErrorShape(missing);
  });

  it("counts wrong named tokens towards the auth throttle, like wrong admin tokens", async () => {
    const left = 60_000 - (Date.now() % 60_000);
    if (left < 10_000) await new Promise((r) => setTimeout(r, left + 100));
    const ip = freshIp();
    const { token } = await createToken("read");
    for (let i = 0; i < ADMIN_FAILURES; i++) {
      expect((await api.get("/api/v1/providers", { token: newApiToken(), headers: { "cf-connecting-ip": ip } })).status).toBe(401);
    }
    const throttled = await api.get("/api/v1/providers", { token: newApiToken(), headers: { "cf-connecting-ip": ip } });
    expect(throttled.status).toBe(429);
    // Refused before the token is looked at: even a valid one.
    expect((await api.get("/api/v1/providers", { token, headers: { "cf-connecting-ip": ip } })).status).toBe(429);
  }, 30_000);
});
