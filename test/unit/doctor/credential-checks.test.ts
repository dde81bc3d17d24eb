import { describe, expect, it } from "vitest";
import { appWebhookCheck, credentialHealthCheck, deliveryVerdict } from "../../../src/doctor/credential-checks";
import { appCredentials, delivery, err, NOW, ok, patCredentials, refused } from "./fixtures";

const HOOK_URL = "https://edgerunner.example.workers.dev/webhooks/github";

describe("credentials", () => {
  it("working credentials pass, saying who uses them", () => {
    const c = credentialHealthCheck(appCredentials(), 2, NOW);
    expect(c).toMatchObject({ id: "credentials.health:cred-app", status: "ok" });
    expect(c.summary).toMatch(/installation on octo.*Used by 2 entities/);
    expect(c.details).toMatchObject({ permissions: { administration: "write" }, events: ["workflow_job"] });
  });

  it("failing credentials fail with GitHub's reason and how to replace the secret", () => {
    const pat = credentialHealthCheck(patCredentials({ health: "failing", failureReason: "401 Bad credentials", failedAt: NOW }), 1, NOW);
    expect(pat.status).toBe("fail");
    expect(pat.summary).toContain("401 Bad credentials");
    expect(pat.fix).toContain("edgerunner credential update ci --token-from-stdin");
    const app = credentialHealthCheck(appCredentials({ health: "failing", failureReason: "installation 777: 404" }), 1, NOW);
    expect(app.fix).toContain("--private-key-from-file");
  });

  it("says which forge accepted or refused a token: Gitea's and Forgejo's are not GitHub's", () => {
    expect(credentialHealthCheck(patCredentials({ forge: "gitea" }), 1, NOW).summary).toMatch(/^Gitea accepts them/);
    const refusedByForgejo = credentialHealthCheck(patCredentials({ forge: "forgejo", health: "failing", failureReason: "401" }), 1, NOW);
    expect(refusedByForgejo.summary).toMatch(/^Forgejo refused them/);
    expect(credentialHealthCheck(patCredentials(), 1, NOW).summary).toMatch(/^GitHub accepts them/);
  });

  it("credentials bound to another API URL are never sent: a failure", () => {
    const moved = credentialHealthCheck(patCredentials({ boundApiUrl: "https://ghes.example.com/api/v3" }), 1, NOW);
    expect([moved.status, moved.summary]).toEqual(["fail", expect.stringContaining("created for https://ghes.example.com/api/v3")]);
    expect(credentialHealthCheck(patCredentials({ boundApiUrl: null }), 1, NOW).status).toBe("fail");
    expect(credentialHealthCheck(patCredentials({ boundApiUrl: "https://api.github.com/" }), 1, NOW).status).toBe("ok");
  });

  it("an installation GitHub does not know, a refused JWT, a suspended installation: each fails with its fix", () => {
    const gone = credentialHealthCheck(appCredentials({ installation: refused(404, "Not Found") }), 1, NOW);
    expect([gone.status, gone.fix]).toEqual(["fail", expect.stringContaining("--installation-id")]);
    const jwt = credentialHealthCheck(appCredentials({ installation: refused(401, "A JSON web token could not be decoded") }), 1, NOW);
    expect([jwt.status, jwt.summary]).toEqual(["fail", expect.stringContaining("wrong App ID or private key")]);
    const inst = appCredentials().installation as { value: object };
    const suspended = credentialHealthCheck(appCredentials({ installation: ok({ ...inst.value, suspended: true } as never) }), 1, NOW);
    expect([suspended.status, suspended.summary]).toEqual(["fail", expect.stringContaining("suspended")]);
  });

  it("a rate limit still in force warns; asking while rate limited skips rather than fails", () => {
    expect(credentialHealthCheck(patCredentials({ blockedUntil: NOW + 60_000 }), 1, NOW).status).toBe("warn");
    expect(credentialHealthCheck(patCredentials({ blockedUntil: NOW - 60_000 }), 1, NOW).status).toBe("ok");
    const limited = credentialHealthCheck(
      appCredentials({ installation: err({ kind: "rate_limited", until: "2026-11-22T10:05:00.000Z" }) }),
      1,
      NOW,
    );
    expect(limited.status).toBe("skip");
  });
});

describe("GitHub's record of a delivery", () => {
  it.each([
    [200, "ok", undefined],
    [202, "ok", undefined],
    [401, "fail", /secret/],
    [0, "fail", /could not reach/],
    [502, "warn", /wrangler tail/],
    [404, "fail", /URL must be/],
  ] as const)("%i → %s", (code, status, fix) => {
    const v = deliveryVerdict(delivery(code), "same secret", HOOK_URL);
    expect(v.status).toBe(status);
    if (fix) expect(v.fix).toMatch(fix);
  });
});

describe("the App's own webhook", () => {
  const withHook = (over: Parameters<typeof appCredentials>[0] = {}) =>
    appCredentials({
      hasWebhookSecret: true,
      appHook: { config: ok({ url: HOOK_URL, contentType: "json" }), lastDelivery: ok(delivery(200)) },
      ...over,
    });

  it("only for App credentials holding its secret", () => {
    expect(appWebhookCheck(appCredentials(), HOOK_URL)).toBeNull();
    expect(appWebhookCheck(patCredentials({ hasWebhookSecret: true }), HOOK_URL)).toBeNull();
  });

  it("pointed here, subscribed, last delivery answered: ok", () => {
    expect(appWebhookCheck(withHook(), HOOK_URL)).toMatchObject({ status: "ok", id: "credentials.app_webhook:cred-app" });
  });

  it("no URL, another URL, or not subscribed to workflow_job: fails", () => {
    const none = appWebhookCheck(
      withHook({ appHook: { config: ok({ url: null, contentType: "json" }), lastDelivery: ok(null) } }),
      HOOK_URL,
    )!;
    expect([none.status, none.fix]).toEqual(["fail", expect.stringContaining(HOOK_URL)]);
    const elsewhere = appWebhookCheck(
      withHook({ appHook: { config: ok({ url: "https://old.example.com/hook", contentType: "json" }), lastDelivery: ok(null) } }),
      HOOK_URL,
    )!;
    expect(elsewhere.summary).toContain("https://old.example.com/hook");
    const inst = appCredentials().installation as { value: object };
    const unsubscribed = appWebhookCheck(withHook({ installation: ok({ ...inst.value, events: [] } as never) }), HOOK_URL)!;
    expect([unsubscribed.status, unsubscribed.fix]).toEqual(["fail", expect.stringContaining("Workflow job")]);
  });

  it("a last delivery refused with 401: the secrets differ", () => {
    const c = appWebhookCheck(
      withHook({ appHook: { config: ok({ url: HOOK_URL, contentType: "json" }), lastDelivery: ok(delivery(401)) } }),
      HOOK_URL,
    )!;
    expect([c.status, c.fix]).toEqual(["fail", expect.stringContaining("--webhook-secret-from-file")]);
  });

  it("not asked when the credentials do not work, nor without PUBLIC_URL", () => {
    expect(appWebhookCheck(withHook({ appHook: null }), HOOK_URL)!.status).toBe("skip");
    expect(appWebhookCheck(withHook(), null)!.status).toBe("skip");
  });
});
