import { exports } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { createApp } from "../../src/app";
import { errorCodes } from "../../src/http/errors";
import { type ApiResponse, api, call, dumpDb, expectErrorShape, expectRejectedWithoutWrites } from "./helpers";

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
    Object.entries(ops)
      .filter(([, op]) => op.security === undefined)
      .map(([method, op]) => ({
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
    expect(res.body).toEqual({
      error: "not found",
      code: "not_found",
      details: { path: "/api/v1/nothing-here" },
      request_id: res.headers.get("x-request-id"),
    });
    expect((await api.get("/nope", { token: null })).status).toBe(404);
  });
});

describe("one error shape", () => {
  afterEach(() => vi.restoreAllMocks());

  it("documents the Error shape, with its closed set of codes, for every error response of every operation", async () => {
    const doc = (await openapi()) as any;
    const schema = doc.components.schemas.Error;
    expect(schema.required.sort()).toEqual(["code", "details", "error", "request_id"]);
    expect(doc.components.schemas.ErrorCode.enum).toEqual([...errorCodes]);
    const errors = Object.entries(doc.paths as Record<string, Record<string, any>>).flatMap(([path, ops]) =>
      Object.entries(ops).flatMap(([method, op]) =>
        Object.entries(op.responses as Record<string, any>)
          .filter(([status]) => Number(status) >= 400)
          .map(([status, r]) => ({
            where: `${method.toUpperCase()} ${path} ${status}`,
            ref: r.content?.["application/json"]?.schema?.$ref,
          })),
      ),
    );
    expect(errors.length).toBeGreaterThan(100);
    expect(errors.filter((e) => e.ref !== "#/components/schemas/Error")).toEqual([]);
  });

  it("answers every 4xx of every route family in it, with a code that says which and the request's id", async () => {
    // The refusals are logged (tested below); keep them off the test output.
    vi.spyOn(console, "log").mockImplementation(() => {});
    const doc = (await openapi()) as any;
    const seen: { where: string; res: ApiResponse; code: string; status: number }[] = [];
    const expectCode = async (code: string, status: number, where: string, res: Promise<ApiResponse>) =>
      void seen.push({ where, res: await res, code, status });
    // Every documented operation, whatever its own security, refuses a caller without credentials.
    for (const [template, ops] of Object.entries(doc.paths as Record<string, Record<string, any>>)) {
      const path = template.replace("{id}", SAMPLE_ID).replace("{name}", "sample").replace("{file}", "runner");
      for (const [method, op] of Object.entries(ops)) {
        const signed = JSON.stringify(op.security ?? "").includes("providerSignature");
        await expectCode(
          signed ? "invalid_signature" : "unauthorized",
          401,
          `${method} ${template}`,
          call(method.toUpperCase(), path, op.requestBody ? {} : undefined, { token: null }),
        );
      }
    }
    for (const { method, path, template, hasBody, requiresFields } of await operations()) {
      if (hasBody) {
        await expectCode("malformed_json", 400, `${method} ${template} malformed`, call(method, path, undefined, { raw: '{"name":' }));
        await expectCode(
          "unsupported_media_type",
          415,
          `${method} ${template} form`,
          call(method, path, undefined, { raw: "a=b", headers: { "content-type": "application/x-www-form-urlencoded" } }),
        );
        if (method === "POST" && requiresFields) await expectCode("invalid_body", 400, `${method} ${template} {}`, call(method, path, {}));
      }
      if (template.includes("{id}"))
        await expectCode(
          "invalid_parameter",
          400,
          `${method} ${template} bad id`,
          call(method, template.replace("{id}", "nope"), hasBody ? {} : undefined),
        );
    }
    await expectCode("not_found", 404, "unknown id", api.get(`/api/v1/scalesets/${SAMPLE_ID}`));
    await expectCode("not_found", 404, "unknown path", api.get("/nope", { token: null }));
    await expectCode("invalid_parameter", 400, "bad query", api.get("/api/v1/jobs?limit=abc"));
    await expectCode("unauthorized", 401, "metrics", api.get("/metrics", { token: null }));
    await expectCode(
      "invalid_parameter",
      400,
      "webhook without headers",
      api.post("/webhooks/github", { action: "queued" }, { token: null }),
    );

    expect(seen.length).toBeGreaterThan(100);
    for (const { where, res, code, status } of seen) {
      expect(res.status, `${where}: ${res.text}`).toBe(status);
      expectErrorShape(res, where);
      expect(res.body.code, where).toBe(code);
    }
    expect(new Set(seen.map((s) => s.res.body.request_id)).size).toBe(seen.length);
  });

  it("takes the request id from cf-ray when Cloudflare sends one, and answers it on successes too", async () => {
    const ray = "8f1b2c3d4e5f6a7b-AMS";
    const failed = await api.get("/api/v1/providers", { token: "wrong", headers: { "cf-ray": ray } });
    expect(failed.status).toBe(401);
    expect(failed.body.request_id).toBe(ray);
    expect(failed.headers.get("x-request-id")).toBe(ray);
    const ok = await api.get("/api/v1/providers");
    expect(ok.status).toBe(200);
    expect(ok.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
    // Not a ray id: a fresh one instead.
    const odd = await api.get("/api/v1/providers", { headers: { "cf-ray": 'x y"{}' } });
    expect(odd.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
  });
});

describe("request ids in the logs", () => {
  afterEach(() => vi.restoreAllMocks());

  it("puts the request's id on every log line written while handling it, concurrent requests apart", async () => {
    const lines: Record<string, any>[] = [];
    const capture = (line: unknown) => void lines.push(JSON.parse(String(line)));
    vi.spyOn(console, "log").mockImplementation(capture);
    vi.spyOn(console, "error").mockImplementation(capture);
    // A refused runner token (instance_auth_refused) and a rejected webhook (webhook_rejected), side by side.
    const [runner, hook] = await Promise.all([
      api.post("/api/v1/callbacks/status", { status: "installing" }, { token: "not-an-instance-token" }),
      api.post("/webhooks/github", { action: "queued" }, { token: null, headers: { "x-github-event": "workflow_job" } }),
    ]);
    vi.restoreAllMocks();
    expect([runner.status, hook.status]).toEqual([401, 400]);
    const byEvent = Object.fromEntries(lines.map((l) => [l.event, l]));
    expect(byEvent.instance_auth_refused?.request_id).toBe(runner.headers.get("x-request-id"));
    expect(byEvent.webhook_rejected?.request_id).toBe(hook.headers.get("x-request-id"));
    expect(runner.headers.get("x-request-id")).not.toBe(hook.headers.get("x-request-id"));
    const ids = new Set([runner.headers.get("x-request-id"), hook.headers.get("x-request-id")]);
    for (const l of lines) expect(ids.has(l.request_id), JSON.stringify(l)).toBe(true);
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
