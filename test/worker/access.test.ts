import { env } from "cloudflare:workers";
import { generateKeyPair } from "jose";
import { afterEach, beforeEach, describe, expect, inject, it, vi } from "vitest";
import type { Env } from "../../src/env";
import { accessEnv, accessJwt, send } from "./access-helpers";
import { expectErrorShape, unique } from "./helpers";

const provider = () => ({ name: unique("prov"), url: "https://shim.example.com", secret: "a-provider-secret-long-enough" });

/** A scale set (with its credentials, repository and provider) made through the API as an Access identity. */
async function scaleSetAs(jwt: string): Promise<string> {
  const creds = await send("POST", "/api/v1/github/credentials", {
    jwt,
    body: { name: unique("pat"), auth_type: "pat", pat: { oauth2_token: "ghp_x" } },
  });
  const repo = await send("POST", "/api/v1/repositories", {
    jwt,
    body: { owner: "octo", name: unique("r"), credentials_name: creds.body.name, webhook_secret: "whsec-long-enough" },
  });
  const prov = await send("POST", "/api/v1/providers", { jwt, body: provider() });
  const ss = await send("POST", `/api/v1/repositories/${repo.body.id}/scalesets`, {
    jwt,
    body: { name: unique("ss"), provider_name: prov.body.name, labels: ["self-hosted"], max_runners: 2, image: "i", flavor: "f" },
  });
  expect(ss.status, ss.text).toBe(201);
  return ss.body.id;
}

beforeEach(() => {
  vi.spyOn(console, "log").mockImplementation(() => {});
  vi.spyOn(console, "warn").mockImplementation(() => {});
});
afterEach(() => vi.restoreAllMocks());

describe("Cloudflare Access on the admin API", () => {
  it("accepts a valid Access JWT as its email, admin by default, and the audit trail names it", async () => {
    const jwt = await accessJwt();
    expect((await send("GET", "/api/v1/providers", { jwt })).status).toBe(200);
    const created = await send("POST", "/api/v1/providers", { jwt, body: provider() });
    expect(created.status, created.text).toBe(201);
    const row = await env.DB.prepare("SELECT actor, via, status FROM audit_log ORDER BY id DESC LIMIT 1").first();
    expect(row).toEqual({ actor: "access:ana@example.com", via: "api", status: 201 });
  });

  it("gives an Access identity only reads when ACCESS_SCOPE=read", async () => {
    const jwt = await accessJwt({ email: "viewer@example.com" });
    const readOnly = accessEnv({ ACCESS_SCOPE: "read" });
    expect((await send("GET", "/api/v1/providers", { jwt, env: readOnly })).status).toBe(200);
    const refused = await send("POST", "/api/v1/providers", { jwt, env: readOnly, body: provider() });
    expect(refused.status).toBe(403);
    expectErrorShape(refused);
    expect((await send("GET", "/api/v1/tokens", { jwt, env: readOnly })).status).toBe(403);
    // A typo is not admin.
    expect((await send("POST", "/api/v1/providers", { jwt, env: accessEnv({ ACCESS_SCOPE: "admni" }), body: provider() })).status).toBe(
      403,
    );
  });

  it("refuses a wrong audience, issuer, expiry, algorithm, key or signature, and a JWT without an email", async () => {
    const other = await generateKeyPair("RS256");
    const ec = await generateKeyPair("ES256");
    const forged = (await accessJwt()).split(".");
    const cases: [string, Promise<string>, RegExp][] = [
      ["wrong audience", accessJwt({}, { aud: ["some-other-app"] }), /aud/],
      ["wrong issuer", accessJwt({}, { iss: "https://evil.cloudflareaccess.com" }), /iss/],
      ["expired", accessJwt({}, { exp: Math.floor(Date.now() / 1000) - 120 }), /expired/],
      ["PS256 with the team's key", accessJwt({}, { alg: "PS256" }), /RS256/],
      ["ES256", accessJwt({}, { alg: "ES256", key: ec.privateKey }), /RS256/],
      ["HS256", accessJwt({}, { alg: "HS256", key: new TextEncoder().encode("a-shared-secret-that-is-long-enough-for-hs256") }), /RS256/],
      ["an unknown kid", accessJwt({}, { kid: "not-a-team-key", key: other.privateKey }), /key/],
      ["another key under the team's kid", accessJwt({}, { key: other.privateKey }), /signature/],
      [
        "a forged payload",
        Promise.resolve(`${forged[0]}.${btoa(JSON.stringify({ email: "mallory@example.com" })).replace(/=+$/, "")}.${forged[2]}`),
        /signature/,
      ],
      ["no email", accessJwt({ email: undefined }), /identity/],
      ["not a JWT", Promise.resolve("not-a-jwt"), /malformed/],
    ];
    for (const [what, jwt, reason] of cases) {
      const res = await send("POST", "/api/v1/providers", { jwt: await jwt, body: provider() });
      expect(res.status, what).toBe(401);
      expectErrorShape(res, what);
      expect(res.body.details.reason, what).toMatch(reason);
    }
    expect((await env.DB.prepare("SELECT COUNT(*) AS n FROM audit_log WHERE actor LIKE 'access:%' AND status = 401").first())!.n).toBe(0);
  });

  it("answers 503 when the team's keys cannot be fetched, without counting it as a wrong credential", async () => {
    const jwt = await accessJwt();
    const ip = `10.250.${Math.floor(Math.random() * 250)}.${Math.floor(Math.random() * 250)}`;
    // More than the 30 wrong credentials a minute that would get this client a 429.
    for (let i = 0; i < 16; i++) {
      for (const certs of ["http://127.0.0.1:1/cdn-cgi/access/certs", `${inject("accessCertsUrl")}/missing`]) {
        const res = await send("GET", "/api/v1/providers", {
          jwt,
          env: accessEnv({ ACCESS_CERTS_URL: certs }),
          headers: { "cf-connecting-ip": ip },
        });
        expect(res.status, certs).toBe(503);
        expectErrorShape(res);
        expect(res.body.details).toEqual({ reason: "the team's Access keys could not be fetched" });
      }
    }
  });

  it("ignores the header when Access is not configured, and lets a bearer token win over it", async () => {
    const jwt = await accessJwt();
    const off = await send("GET", "/api/v1/providers", { jwt, env: { ...env } as Env });
    expect(off.status).toBe(401);
    expect(off.body.details).toEqual({ reason: "missing bearer token" });
    const both = await send("GET", "/api/v1/providers", { jwt: "garbage", headers: { authorization: "Bearer test-admin-token" } });
    expect(both.status).toBe(200);
  });
});

describe("Cloudflare Access on the dashboard", () => {
  it("signs the user in from the JWT, with no login page, and records their actions under their email", async () => {
    const jwt = await accessJwt({ email: "ops@example.com" });
    expect((await send("GET", "/ui", { env: accessEnv() })).status).toBe(303);
    const home = await send("GET", "/ui", { jwt });
    expect(home.status).toBe(200);
    expect(home.text).toContain("Scale sets");
    const csrf = /name="_csrf" value="([^"]+)"/.exec(home.text)![1]!;
    const id = await scaleSetAs(jwt);
    const form = { _csrf: csrf, enabled: "false" };
    const res = await send("POST", `/ui/scalesets/${id}/enabled`, { jwt, form });
    expect(res.status).toBe(303);
    const row = await env.DB.prepare("SELECT actor, via, method, status FROM audit_log ORDER BY id DESC LIMIT 1").first();
    expect(row).toEqual({ actor: "access:ops@example.com", via: "dashboard", method: "PUT", status: 200 });
    // The CSRF token is bound to the identity: another user's page token does not work for this one.
    const crossUser = await send("POST", `/ui/scalesets/${id}/enabled`, {
      jwt: await accessJwt({ email: "someone-else@example.com" }),
      form,
    });
    expect(crossUser.status).toBe(403);
  });

  it("shows a read-only user no buttons, and the API refuses their forged action", async () => {
    const admin = await accessJwt({ email: "admin@example.com" });
    const id = await scaleSetAs(admin);
    const viewer = await accessJwt({ email: "viewer@example.com" });
    const readOnly = accessEnv({ ACCESS_SCOPE: "read" });
    const page = await send("GET", `/ui/scalesets/${id}`, { jwt: viewer, env: readOnly });
    expect(page.status).toBe(200);
    expect(page.text).toContain("Read-only");
    expect(page.text).not.toContain(">Pause<");
    expect((await send("GET", `/ui/scalesets/${id}`, { jwt: admin })).text).toContain(">Pause<");
    const csrf = /name="_csrf" value="([^"]+)"/.exec(page.text)![1]!;
    const forged = await send("POST", `/ui/scalesets/${id}/enabled`, {
      jwt: viewer,
      env: readOnly,
      form: { _csrf: csrf, enabled: "false" },
    });
    expect(forged.status).toBe(403);
    expect(forged.text).toContain("The action failed (403)");
    expect((await env.DB.prepare("SELECT enabled FROM scale_sets WHERE id = ?").bind(id).first())!.enabled).toBe(1);
    const row = await env.DB.prepare("SELECT actor, via, status FROM audit_log ORDER BY id DESC LIMIT 1").first();
    expect(row).toEqual({ actor: "access:viewer@example.com", via: "dashboard", status: 403 });
  });

  it("refuses a bad JWT with a 401 page", async () => {
    const res = await send("GET", "/ui", { jwt: await accessJwt({}, { aud: ["other"] }) });
    expect(res.status).toBe(401);
    expect(res.text).toContain("Cloudflare Access sign-in refused");
  });
});
