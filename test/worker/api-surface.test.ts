import { exports } from "cloudflare:workers";
import { describe, expect, it, vi } from "vitest";
import { createApp } from "../../src/app";
import { api, call, dumpDb, expectErrorShape, expectRejectedWithoutWrites } from "./helpers";

const SAMPLE_ID = "3b241101-e2bb-4255-8caf-4136c566a962";

async function openapi() {
  const res = await api.get("/api/v1/openapi.json", { token: null });
  expect(res.status).toBe(200);
  return res.body as { openapi: string; paths: Record<string, Record<string, any>> };
}

/**
 * Every documented admin operation, with its path parameters filled in. Operations with their
 * own security (provider callbacks, signed by the shim) have their own tests.
 */
async function operations() {
  const doc = (await openapi()) as any;
  const resolve = (schema: any): any => (schema?.$ref ? doc.components.schemas[schema.$ref.split("/").pop()] : schema);
  return Object.entries(doc.paths as Record<string, Record<string, any>>).flatMap(([path, ops]) =>
    Object.entries(ops).filter(([, op]) => op.security === undefined).map(([method, op]) => ({
      method: method.toUpperCase(),
      template: path,
      path: path.replace("{id}", SAMPLE_ID).replace("{name}", "sample"),
      hasBody: Boolean(op.requestBody),
      requiresFields: (() => {
        const schema = resolve(op.requestBody?.content?.["application/json"]?.schema);
        return Boolean(schema?.required?.length || schema?.oneOf || schema?.anyOf);
      })(),
      op,
    })),
  );
}

describe("OpenAPI document", () => {
  it("is OpenAPI 3.1, served without a token, and describes every admin route of the app", async () => {
    const doc = await openapi();
    expect(doc.openapi).toBe("3.1.0");
    const documented = new Set(
      Object.entries(doc.paths).flatMap(([p, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${p}`.replace(/\{(\w+)\}/g, ":$1"))),
    );
    const served = new Set(
      createApp()
        .routes.filter((r) => r.path.startsWith("/api/v1/") && r.method !== "ALL" && !r.path.endsWith("/openapi.json"))
        .map((r) => `${r.method} ${r.path}`),
    );
    expect(served.size).toBeGreaterThan(30);
    expect([...served].filter((r) => !documented.has(r))).toEqual([]);
    expect([...documented].filter((r) => !served.has(r))).toEqual([]);
  });

  it("documents request bodies and error responses", async () => {
    const doc = await openapi();
    const create = doc.paths["/api/v1/github/credentials"]!.post;
    expect(create.requestBody.content["application/json"].schema).toBeDefined();
    expect(Object.keys(create.responses)).toEqual(expect.arrayContaining(["201", "400", "401", "409"]));
    expect(JSON.stringify(doc)).toContain('"adminToken"');
  });
});

describe("admin authentication", () => {
  it("refuses every documented route without a token, with a wrong token and with a malformed header, writing nothing", async () => {
    const ops = await operations();
    expect(ops.length).toBeGreaterThan(30);
    for (const { method, path, hasBody } of ops) {
      const body = hasBody ? {} : undefined;
      for (const opts of [{ token: null }, { token: "wrong-token" }, { token: null, headers: { authorization: "Basic dGVzdDp0ZXN0" } }]) {
        const res = await expectRejectedWithoutWrites(401, () => call(method, path, body, opts));
        expect(res.body.error).toBe("unauthorized");
        expect(res.body.code).toBe("unauthorized");
        expect(res.headers.get("www-authenticate")).toMatch(/^Bearer/);
      }
    }
  });

  it("accepts the right token", async () => {
    expect((await api.get("/api/v1/providers")).status).toBe(200);
  });

  it("rejects a token that is only a prefix or an extension of the right one", async () => {
    for (const token of ["test-admin-toke", "test-admin-tokenX", "TEST-ADMIN-TOKEN"]) {
      expect((await api.get("/api/v1/providers", { token })).status).toBe(401);
    }
  });
});

describe("request shape", () => {
  it("answers malformed JSON with 400 on every route that takes a body, writing nothing", async () => {
    for (const { method, path, hasBody } of await operations()) {
      if (!hasBody) continue;
      const res = await expectRejectedWithoutWrites(400, () => call(method, path, undefined, { raw: '{"name": "x",' }));
      expect(res.body.error, `${method} ${path}`).toMatch(/malformed JSON/);
      expect(res.body.code, `${method} ${path}`).toBe("malformed_json");
    }
  });

  it("answers a non-JSON body with 415 on every route that takes a body, writing nothing", async () => {
    for (const { method, path, hasBody } of await operations()) {
      if (!hasBody) continue;
      const res = await expectRejectedWithoutWrites(415, () =>
        call(method, path, undefined, { raw: "name=x", headers: { "content-type": "application/x-www-form-urlencoded" } }),
      );
      expect(res.body.code, `${method} ${path}`).toBe("unsupported_media_type");
    }
  });

  it("answers an empty object with field-level 400s on every create route", async () => {
    for (const { method, path, template, requiresFields } of await operations()) {
      if (method !== "POST" || !requiresFields) continue;
      const res = await expectRejectedWithoutWrites(400, () => call(method, path, {}));
      expect(res.body.code, template).toBe("invalid_body");
      expect(Array.isArray(res.body.details), template).toBe(true);
      expect(res.body.details.length, template).toBeGreaterThan(0);
      for (const d of res.body.details) expect(d).toEqual({ path: expect.any(String), message: expect.any(String) });
    }
  });

  it("answers unknown ids with 404, and malformed ids with 400, writing nothing", async () => {
    for (const { method, path, template, hasBody } of await operations()) {
      if (!template.includes("{id}") && !template.includes("{name}")) continue;
      if (method === "POST" || method === "PUT") continue;
      await expectRejectedWithoutWrites(404, () => call(method, path, hasBody ? {} : undefined));
      if (template.includes("{id}")) {
        const res = await expectRejectedWithoutWrites(400, () => call(method, template.replace("{id}", "not-a-uuid")));
        expect(res.body.details[0].path).toBe("id");
      }
    }
  });

  it("gives JSON 404s for unknown paths", async () => {
    const res = await api.get("/api/v1/nothing-here");
    expect(res.status).toBe(404);
    expect(res.body).toEqual({
      error: "not found",
      code: "not_found",
      details: { path: "/api/v1/nothing-here" },
      request_id: res.headers.get("x-request-id"),
    });
    const outside = await api.get("/nope", { token: null });
    expect(outside.status).toBe(404);
    expectErrorShape(outside);
  });

  it("gives every request its own id, and takes Cloudflare's ray id when there is one", async () => {
    const a = await api.get("/api/v1/providers");
    const b = await api.get("/api/v1/providers");
    expect(a.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
    expect(b.headers.get("x-request-id")).not.toBe(a.headers.get("x-request-id"));
    const ray = await api.get("/api/v1/nothing-here", { headers: { "cf-ray": "8c3f2c1b6f2e4b7e-AMS" } });
    expect(ray.body.request_id).toBe("8c3f2c1b6f2e4b7e-AMS");
    // Anything else in the header is not trusted as an id.
    const junk = await api.get("/api/v1/nothing-here", { headers: { "cf-ray": "not-a-ray" } });
    expect(junk.body.request_id).not.toContain("ray");
  });

  it("writes the request's id into every log line the request produced", async () => {
    const lines: string[] = [];
    const spies = (["log", "error"] as const).map((level) =>
      vi.spyOn(console, level).mockImplementation((...args: unknown[]) => void lines.push(args.map(String).join(" "))),
    );
    let res;
    try {
      // Unsigned and unknown: the webhook route logs its rejection; an instance route logs a refused token.
      res = await call("POST", "/webhooks/github", { action: "queued" }, {
        token: null,
        headers: { "x-github-event": "workflow_job", "x-github-delivery": "d-1", "x-hub-signature-256": "sha256=00" },
      });
      await call("GET", "/api/v1/metadata/runner-metadata", undefined, { token: "not-a-token" });
    } finally {
      for (const s of spies) s.mockRestore();
    }
    expect(res.status).toBe(401);
    const events = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    const rejected = events.find((e) => e.event === "webhook_rejected");
    expect(rejected?.request_id).toBe(res.body.request_id);
    const refused = events.find((e) => e.event === "instance_auth_refused");
    expect(refused?.request_id).toEqual(expect.any(String));
    expect(refused?.request_id).not.toBe(res.body.request_id);
    for (const e of events) expect(e.request_id, JSON.stringify(e)).toEqual(expect.any(String));
  });
});

describe("health", () => {
  it("serves /healthz without a token and touches nothing", async () => {
    const before = await dumpDb();
    const res = await exports.default.fetch(new Request("https://edgerunner.test/healthz"));
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: "ok" });
    expect(await dumpDb()).toEqual(before);
  });

  it("has the github.com endpoint from the first migration", async () => {
    const res = await api.get("/api/v1/github/endpoints/github.com");
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ name: "github.com", api_base_url: "https://api.github.com" });
    expect(Date.parse(res.body.created_at)).toBeGreaterThan(Date.parse("2020-01-01"));
  });
});
