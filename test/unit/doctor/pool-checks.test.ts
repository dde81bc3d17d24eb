import { describe, expect, it } from "vitest";
import { diagnose } from "../../../src/doctor/diagnose";
import type { CredentialFacts, PoolMemberFacts } from "../../../src/doctor/facts";
import { entityPoolCheck } from "../../../src/doctor/pool-checks";
import {
  appCredentials,
  config,
  FULL_APP_PERMISSIONS,
  NOW,
  ok,
  organization,
  patCredentials,
  provider,
  refused,
  repository,
  scaleSet,
} from "./fixtures";

/** A second App installed on the entity's account, as a pool member. */
const poolApp = (over: { permissions?: Record<string, string>; account?: string } & Partial<CredentialFacts> = {}) => {
  const { permissions, account, ...rest } = over;
  const base = appCredentials({ id: "cred-app-2", name: "octo-app-2", appId: 5151, installationId: 888 });
  const inst = (base.installation as { value: object }).value;
  return appCredentials({
    ...base,
    installation: ok({ ...inst, permissions: permissions ?? { ...FULL_APP_PERMISSIONS }, account: account ?? "octo" } as never),
    ...rest,
  });
};
const member = (credentialId: string, runners: PoolMemberFacts["runners"] = ok({ scopes: null })): PoolMemberFacts => ({
  credentialId,
  runners,
});
const orgWithPool = (...pool: PoolMemberFacts[]) => organization({ credentialId: "cred-app", pool });

describe("a credential of an entity's pool", () => {
  it("an App installed on the entity's account with what runners need: ok, under its own id", () => {
    const c = entityPoolCheck(orgWithPool(member("cred-app-2")), member("cred-app-2"), poolApp(), "ok");
    expect(c).toMatchObject({
      id: "entity.pool:ent-org:cred-app-2",
      subject: "organization octo: pool credentials octo-app-2",
      status: "ok",
      summary: "octo-app-2 may mint its runners' JIT configs. GitHub let octo-app-2 list its runners.",
    });
  });

  it("an App installed on another account fails, saying to install it on the owner or take it out of the pool", () => {
    const e = orgWithPool(member("cred-app-2"), member("cred-app-3"));
    const c = entityPoolCheck(e, member("cred-app-2"), poolApp({ account: "someone-else" }), "ok");
    expect(c.status).toBe("fail");
    expect(c.summary).toContain("Installation 888 is on someone-else, not octo.");
    expect(c.fix).toBe(
      "Install App 5151 on octo and pool that installation's credentials instead, or take them out of the pool: " +
        "edgerunner org update octo --pool-credentials <the others, comma-separated>",
    );
  });

  it("an App without the permission that registers runners fails, naming it; it needs no webhook, so Actions: Read only warns", () => {
    const noRunners = entityPoolCheck(
      orgWithPool(member("cred-app-2")),
      member("cred-app-2"),
      poolApp({ permissions: { actions: "read" } }),
      "ok",
    );
    expect(noRunners.status).toBe("fail");
    expect(noRunners.summary).toContain("Organization permissions → Self-hosted runners: Read and write");
    // Even when the App holds a webhook secret and the entity's scale sets take webhooks: a pool member's webhook feeds nothing.
    const noActions = entityPoolCheck(
      orgWithPool(member("cred-app-2")),
      member("cred-app-2"),
      poolApp({ permissions: { organization_self_hosted_runners: "write" }, hasWebhookSecret: true }),
      "ok",
    );
    expect(noActions.status).toBe("warn");
  });

  it("a classic PAT without the scope fails; GitHub refusing the read names what to grant", () => {
    const e = orgWithPool(member("cred-pat", ok({ scopes: ["repo"] })));
    const lacking = entityPoolCheck(e, e.pool[0]!, patCredentials(), "ok");
    expect([lacking.status, lacking.summary]).toEqual(["fail", expect.stringContaining("admin:org or manage_runners:org")]);
    const refusedRead = entityPoolCheck(e, member("cred-pat", refused(403, "Must have admin rights")), patCredentials(), "ok");
    expect([refusedRead.status, refusedRead.fix]).toEqual(["fail", expect.stringContaining("manage_runners:org")]);
  });

  it("an App on an enterprise fails: take it out of the pool; the only member: --pool-credentials ''", () => {
    const ent = repository({ id: "ent-ent", kind: "enterprise", name: "acme", owner: "acme", pool: [member("cred-app-2")] });
    const c = entityPoolCheck(ent, member("cred-app-2"), poolApp(), "ok");
    expect([c.status, c.fix]).toEqual([
      "fail",
      "GitHub Apps cannot mint enterprise runners: take them out of the pool: edgerunner enterprise update acme --pool-credentials ''",
    ]);
  });

  it("credentials that do not work are not checked again here (their own check fails); gone ones fail", () => {
    const e = orgWithPool(member("cred-app-2", null));
    expect(entityPoolCheck(e, e.pool[0]!, poolApp({ health: "failing" }), "fail").status).toBe("skip");
    expect(entityPoolCheck(e, e.pool[0]!, undefined, "skip")).toMatchObject({
      status: "fail",
      summary: "A credential of its pool is gone.",
    });
  });
});

describe("pools in the report", () => {
  const base = {
    now: NOW,
    config: config(),
    providers: [provider()],
    unmatched: { count: 0, labelSets: [] },
  };

  it("each member is checked after the entity's own checks; credentials count the entities whose pool holds them", () => {
    const r = diagnose({
      ...base,
      credentials: [appCredentials(), poolApp()],
      entities: [orgWithPool(member("cred-app-2"))],
      scaleSets: [scaleSet({ entityId: "ent-org" })],
    });
    expect(r.checks.map((c) => c.id).filter((id) => id.startsWith("entity.") || id.startsWith("credentials."))).toEqual([
      "credentials.health:cred-app",
      "credentials.health:cred-app-2",
      "entity.access:ent-org",
      "entity.webhook:ent-org",
      "entity.pool:ent-org:cred-app-2",
    ]);
    expect(r.checks.find((c) => c.id === "credentials.health:cred-app-2")?.summary).toContain("Used by 1 entity.");
  });

  it("a broken pool member fails the report, but not the scale sets: their JIT configs go on with the other credentials", () => {
    const r = diagnose({
      ...base,
      credentials: [appCredentials(), poolApp({ account: "someone-else" })],
      entities: [orgWithPool(member("cred-app-2"))],
      scaleSets: [scaleSet({ entityId: "ent-org" })],
    });
    expect(r.ok).toBe(false);
    expect(r.checks.filter((c) => c.status === "fail").map((c) => c.id)).toEqual(["entity.pool:ent-org:cred-app-2"]);
  });
});
