import { describe, expect, it } from "vitest";
import { entityAccessCheck, entityWebhookCheck } from "../../../src/doctor/entity-checks";
import {
  appCredentials,
  delivery,
  err,
  FULL_APP_PERMISSIONS,
  NOW,
  ok,
  organization,
  patCredentials,
  refused,
  repository,
} from "./fixtures";

const HOOK_URL = "https://edgerunner.example.workers.dev/webhooks/github";
const withPermissions = (permissions: Record<string, string>, over = {}) => {
  const inst = appCredentials().installation as { value: object };
  return appCredentials({ installation: ok({ ...inst.value, permissions, ...over } as never) });
};

describe("may the credentials manage the entity's runners", () => {
  it("an App with every permission, and GitHub listing the runners: ok", () => {
    const c = entityAccessCheck(repository({ credentialId: "cred-app" }), appCredentials(), "ok");
    expect(c).toMatchObject({ id: "entity.access:ent-repo", subject: "repository octo/app", status: "ok" });
  });

  it("an App without Administration write for a repository fails, naming the permission", () => {
    const c = entityAccessCheck(repository(), withPermissions({ administration: "read", actions: "read" }), "ok");
    expect(c.status).toBe("fail");
    expect(c.summary).toContain("Repository permissions → Administration: Read and write");
    expect(c.fix).toContain("Administration: Read and write");
  });

  it("an App without Self-hosted runners write for an organization fails; without Actions read only warns", () => {
    const org = entityAccessCheck(organization(), withPermissions({ administration: "write", actions: "read" }), "ok");
    expect([org.status, org.summary]).toEqual(["fail", expect.stringContaining("Self-hosted runners")]);
    const noActions = entityAccessCheck(repository(), withPermissions({ administration: "write" }), "ok");
    expect([noActions.status, noActions.summary]).toEqual(["warn", expect.stringContaining("Actions: Read")]);
  });

  it("an installation on another account, or an enterprise with an App: fails", () => {
    const other = entityAccessCheck(repository(), withPermissions(FULL_APP_PERMISSIONS, { account: "someone" }), "ok");
    expect([other.status, other.summary]).toEqual(["fail", expect.stringContaining("is on someone, not octo")]);
    const ent = entityAccessCheck(repository({ kind: "enterprise", name: "acme", owner: "acme" }), appCredentials(), "ok");
    expect([ent.status, ent.fix]).toEqual(["fail", expect.stringContaining("manage_runners:enterprise")]);
  });

  it("a classic PAT's scopes are compared with what the entity needs", () => {
    const fine = entityAccessCheck(repository({ runners: ok({ scopes: ["repo", "workflow"] }) }), patCredentials(), "ok");
    expect([fine.status, fine.details?.scopes]).toEqual(["ok", ["repo", "workflow"]]);
    const lacking = entityAccessCheck(organization({ runners: ok({ scopes: ["repo"] }) }), patCredentials(), "ok");
    expect(lacking.status).toBe("fail");
    expect(lacking.summary).toContain("admin:org or manage_runners:org");
    expect(lacking.summary).toContain("it has repo");
  });

  it("a fine-grained PAT (no scopes header) is judged by the read alone, and says so", () => {
    const c = entityAccessCheck(repository(), patCredentials(), "ok");
    expect([c.status, c.summary]).toEqual(["ok", expect.stringContaining("fine-grained")]);
  });

  it("GitHub refusing the read: 403 names what to grant, 404 says it cannot see the entity", () => {
    const forbidden = entityAccessCheck(
      repository({ runners: refused(403, "Resource not accessible by personal access token") }),
      patCredentials(),
      "ok",
    );
    expect(forbidden.status).toBe("fail");
    expect(forbidden.fix).toMatch(/repo.*Administration: Read and write/);
    const hidden = entityAccessCheck(repository({ runners: refused(404, "Not Found") }), appCredentials(), "ok");
    expect([hidden.status, hidden.fix]).toEqual(["fail", expect.stringContaining("Repository access")]);
  });

  it("no answer fails; a rate limit skips", () => {
    expect(
      entityAccessCheck(repository({ runners: err({ kind: "unreachable", message: "timeout" }) }), patCredentials(), "ok").status,
    ).toBe("fail");
    expect(entityAccessCheck(repository({ runners: err({ kind: "rate_limited", until: "x" }) }), patCredentials(), "ok").status).toBe(
      "skip",
    );
  });

  it("failing credentials: not checked here (their own check fails)", () => {
    expect(entityAccessCheck(repository(), patCredentials(), "fail").status).toBe("skip");
    expect(entityAccessCheck(repository(), undefined, "skip").status).toBe("fail");
  });
});

describe("how the entity's jobs reach the coordinator", () => {
  const check = (e = repository(), c = patCredentials(), app: "ok" | "fail" | null = null) => entityWebhookCheck(e, c, HOOK_URL, app, NOW);

  it("our hook, active, subscribed, its last delivery answered: ok, with our side's last job", () => {
    const c = check(repository({ lastJobAt: NOW - 60_000 }));
    expect(c.status).toBe("ok");
    expect(c.summary).toContain("answered 200");
    expect(c.summary).toContain("The last job from it arrived 2026-11-22T09:59:00.000Z");
  });

  it("a last delivery GitHub saw fail: fails with the fix for its status", () => {
    const refusedHook = check(repository({ hook: { ...repository().hook!, lastDelivery: ok(delivery(401)) } }));
    expect(refusedHook.status).toBe("fail");
    expect(refusedHook.fix).toContain("edgerunner repo webhook install octo/app");
    const serverError = check(repository({ hook: { ...repository().hook!, lastDelivery: ok(delivery(503)) } }));
    expect(serverError.status).toBe("warn");
  });

  it("no hook with our URL: fails with the install command, unless jobs arrive anyway (warn)", () => {
    const none = check(organization({ hook: { hook: ok(null), lastDelivery: null } }));
    expect([none.status, none.fix]).toEqual(["fail", "edgerunner org webhook install octo"]);
    const proxied = check(organization({ hook: { hook: ok(null), lastDelivery: null }, lastJobAt: NOW - 3600_000 }));
    expect(proxied.status).toBe("warn");
  });

  it("inactive, or not subscribed to workflow_job: fails", () => {
    const hook = (h: object) =>
      repository({
        hook: { hook: ok({ id: 9, active: true, events: ["workflow_job"], contentType: "json", ...h }), lastDelivery: ok(null) },
      });
    expect(check(hook({ active: false })).summary).toContain("inactive");
    expect(check(hook({ events: ["push"] })).status).toBe("fail");
    expect(check(hook({ events: ["*"] })).status).toBe("ok");
  });

  it("credentials that may not read hooks: a warning saying where to look", () => {
    const c = check(repository({ hook: { hook: refused(404, "Not Found"), lastDelivery: null } }));
    expect(c.status).toBe("warn");
    expect(c.fix).toContain("admin:repo_hook");
  });

  it("no webhook needed for the scale set API; none to look for without scale sets; enterprises cannot be asked", () => {
    expect(check(repository({ scaleSets: { webhook: 0, scaleset_api: 1, poll: 0 } })).status).toBe("ok");
    expect(check(repository({ scaleSets: { webhook: 0, scaleset_api: 0, poll: 0 } })).status).toBe("skip");
    expect(check(repository({ kind: "enterprise", name: "acme", hook: null })).status).toBe("skip");
  });

  it("fed by the App's webhook: its verdict, checked once at the credentials", () => {
    const app = appCredentials({ hasWebhookSecret: true });
    expect(check(repository(), app, "fail")).toMatchObject({ status: "fail", fix: expect.stringContaining("App 4242") });
    expect(check(repository(), app, "ok").status).toBe("ok");
  });
});
