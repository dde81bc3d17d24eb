import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createApp } from "../../src/app";
import { api, call, dumpDb, expectRejectedWithoutWrites } from "./helpers";

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
    }
  });

  it("answers a non-JSON body with 415 on every route that takes a body, writing nothing", async () => {
    for (const { method, path, hasBody } of await operations()) {
      if (!hasBody) continue;
      await expectRejectedWithoutWrites(415, () =>
        call(method, path, undefined, { raw: "name=x", headers: { "content-type": "application/x-www-form-urlencoded" } }),
      );
    }
  });

  it("answers an empty object with field-level 400s on every create route", async () => {
    for (const { method, path, template, requiresFields } of await operations()) {
      if (method !== "POST" || !requiresFields) continue;
      const res = await expectRejectedWithoutWrites(400, () => call(method, path, {}));
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
    expect(res.body).toEqual({ error: "not found", details: { path: "/api/v1/nothing-here" } });
    expect((await api.get("/nope", { token: null })).status).toBe(404);
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
