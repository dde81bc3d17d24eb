import { describe, expect, it } from "vitest";
import { diagnose } from "../../../src/doctor/diagnose";
import type { DoctorFacts, EntityFacts } from "../../../src/doctor/facts";
import { forgeAccessCheck, forgeWebhookCheck } from "../../../src/doctor/forge-entity-checks";
import { scaleSetReadyCheck } from "../../../src/doctor/scaleset-checks";
import { config, err, NOW, ok, patCredentials, provider, refused, repository, scaleSet } from "./fixtures";

// Gitea and Forgejo entities get the checks that mean something on their forge, never GitHub's.

const URL = "https://edgerunner.example.workers.dev/webhooks/gitea";
const hookOf = (over: Partial<{ active: boolean; events: string[] }> = {}) => ({
  hook: ok({ id: 3, active: true, events: ["workflow_job"], contentType: "json", ...over }),
  lastDelivery: null,
});
const gitea = (over: Partial<EntityFacts> = {}) =>
  repository({ forge: "gitea", hook: hookOf(), ...over }) as EntityFacts & { forge: "gitea" };
const forgejo = (over: Partial<EntityFacts> = {}) =>
  repository({ forge: "forgejo", hook: null, scaleSets: { webhook: 0, scaleset_api: 0, poll: 1 }, ...over }) as EntityFacts & {
    forge: "forgejo";
  };

describe("the setup check on Gitea and Forgejo", () => {
  it("access: the cheap read with the token passes, or its refusal says which token scope to give", () => {
    expect(forgeAccessCheck(gitea(), patCredentials(), "ok")).toMatchObject({ status: "ok", summary: "Gitea let ci list its runners." });
    expect(forgeAccessCheck(forgejo(), patCredentials(), "ok")).toMatchObject({
      status: "ok",
      summary: "Forgejo let ci list its waiting jobs.",
    });
    const refusedCheck = forgeAccessCheck(
      gitea({ kind: "organization", name: "acme", runners: refused(403, "token does not have scope") }),
      patCredentials(),
      "ok",
    );
    expect(refusedCheck).toMatchObject({ status: "fail", summary: expect.stringMatching(/Gitea answered 403 for its runners/) });
    expect(refusedCheck.fix).toMatch(/write:organization/);
    const instance = forgeAccessCheck(forgejo({ kind: "enterprise", name: "x", runners: refused(404) }), patCredentials(), "ok");
    expect(instance).toMatchObject({ subject: "Forgejo instance", status: "fail" });
    expect(instance.fix).toMatch(/write:admin/);
    // No answer is a failure; a wait the forge asked for says nothing about the setup.
    expect(forgeAccessCheck(gitea({ runners: err({ kind: "unreachable", message: "timeout" }) }), patCredentials(), "ok").status).toBe(
      "fail",
    );
    expect(
      forgeAccessCheck(gitea({ runners: err({ kind: "rate_limited", until: "2026-11-22T10:05:00Z" }) }), patCredentials(), "ok").status,
    ).toBe("skip");
    expect(forgeAccessCheck(gitea(), patCredentials(), "fail").status).toBe("skip");
  });

  it("webhook: Forgejo is polled; Gitea's hook is looked up at Gitea and judged", () => {
    expect(forgeWebhookCheck(forgejo(), URL)).toMatchObject({ status: "ok", summary: expect.stringMatching(/^Polled: no webhook needed/) });
    expect(forgeWebhookCheck(gitea(), URL)).toMatchObject({
      status: "ok",
      summary: expect.stringMatching(/^Hook 3 delivers workflow_job events to .*\/webhooks\/gitea/),
    });
    expect(forgeWebhookCheck(gitea({ hook: { hook: ok(null), lastDelivery: null } }), URL)).toMatchObject({
      status: "fail",
      fix: "edgerunner repo webhook install octo/app",
    });
    expect(forgeWebhookCheck(gitea({ hook: hookOf({ active: false, events: ["push"] }) }), URL).status).toBe("fail");
    expect(forgeWebhookCheck(gitea({ hook: { hook: refused(403), lastDelivery: null } }), URL).status).toBe("warn");
    expect(forgeWebhookCheck(gitea(), null).status).toBe("skip");
    expect(forgeWebhookCheck(gitea({ scaleSets: { webhook: 0, scaleset_api: 0, poll: 0 } }), URL).status).toBe("skip");
  });

  it("the whole report has no GitHub warning for them, and skips their credential pools saying why", () => {
    const f: DoctorFacts = {
      now: NOW,
      config: config(),
      credentials: [patCredentials()],
      entities: [gitea({ id: "g" }), forgejo({ id: "f", pool: [{ credentialId: "cred-pat", runners: null }] })],
      providers: [provider()],
      scaleSets: [scaleSet({ entityId: "g" }), scaleSet({ id: "s2", entityId: "f", intake: "poll" })],
      unmatched: { count: 0, labelSets: [] },
    };
    const r = diagnose(f);
    expect(r.checks.filter((c) => c.status === "warn" || c.status === "fail")).toEqual([]);
    const mine = r.checks.filter((c) => /:(g|f|ss|s2)(:|$)/.test(c.id));
    expect(mine.length).toBeGreaterThan(0);
    expect(mine.filter((c) => /GitHub/.test(c.summary)).map((c) => c.summary)).toEqual([]);
    expect(r.checks.find((c) => c.id === "entity.pool:f:cred-pat")).toMatchObject({
      status: "skip",
      summary: expect.stringMatching(/Not used on Forgejo/),
    });
  });

  it("a polling scale set warns when its poller fails, and names the forge that refused access", () => {
    const s = scaleSet({
      intake: "poll",
      object: ok({
        createFailures: 0,
        lastFailureAt: null,
        hardLimitedAt: null,
        createAllowedAt: null,
        listener: null,
        poller: { failures: 2, lastError: "HTTP 500", lastPollAt: null },
      }),
    });
    const up = {
      credentials: { name: "ci", status: "ok" as const },
      access: "fail" as const,
      webhook: "ok" as const,
      provider: { name: "aws", status: "ok" as const },
    };
    const c = scaleSetReadyCheck(s, forgejo(), up);
    expect(c.status).toBe("fail");
    expect(c.summary).toMatch(/Forgejo will not let its credentials/);
    expect(c.summary).toMatch(/poller failed 2 time\(s\) in a row: HTTP 500/);
  });
});
