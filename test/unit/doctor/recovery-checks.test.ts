import { describe, expect, it } from "vitest";
import type { EntityRecoveryFacts, RecoveryFacts } from "../../../src/doctor/facts";
import { recoveryCheck } from "../../../src/doctor/recovery-checks";
import { NOW, repository } from "./fixtures";

const ON: RecoveryFacts = { intervalMs: 60_000, lastPassAt: NOW - 30_000 };
const quiet = { failed: 0, recovered: 0, found: 0 };
const facts = (means: EntityRecoveryFacts["means"], last24h = quiet): EntityRecoveryFacts => ({ means, last24h });

describe("how an entity's lost deliveries are found", () => {
  it("from its hook's record at GitHub: ok, with the last day's figures", () => {
    const c = recoveryCheck(
      repository({
        recovery: facts([{ kind: "repository", status: "ok", detail: null, since: NOW }], { failed: 4, recovered: 3, found: 0 }),
      }),
      ON,
      NOW,
    )!;
    expect(c.id).toMatch(/^entity\.recovery:/);
    expect(c.status).toBe("ok");
    expect(c.summary).toContain("recovered from its repository hook's record of deliveries at GitHub");
    expect(c.summary).toContain("Last 24 h: 4 failed deliveries seen, 3 recovered");
  });

  it("a hook its credentials may not read: a warning naming the permission, and the backstop standing in", () => {
    const c = recoveryCheck(
      repository({
        recovery: facts([
          { kind: "repository", status: "forbidden", detail: "403 Resource not accessible by integration", since: NOW },
          { kind: "backstop", status: "ok", detail: null, since: NOW, reason: "its credentials may not read the hook's deliveries" },
        ]),
      }),
      ON,
      NOW,
    )!;
    expect(c.status).toBe("warn");
    expect(c.summary).toContain("Cannot read its repository hook's record");
    expect(c.summary).toContain("the backstop");
    expect(c.fix).toContain("Webhooks: read");
  });

  it("an enterprise: the backstop, and why", () => {
    const c = recoveryCheck(
      repository({
        kind: "enterprise",
        name: "acme",
        recovery: facts([
          { kind: "backstop", status: "ok", detail: null, since: NOW, reason: "GitHub has no API for an enterprise webhook's deliveries" },
        ]),
      }),
      ON,
      NOW,
    )!;
    expect(c.status).toBe("ok");
    expect(c.summary).toContain("GitHub has no API for an enterprise webhook's deliveries");
  });

  it("recovery off, or not running: a warning saying what to do", () => {
    const e = repository({ recovery: facts([{ kind: "repository", status: "ok", detail: null, since: NOW }]) });
    const off = recoveryCheck(e, { intervalMs: 0, lastPassAt: null }, NOW)!;
    expect(off.status).toBe("warn");
    expect(off.fix).toContain("DELIVERY_RECOVERY_SECONDS");
    const stale = recoveryCheck(e, { intervalMs: 60_000, lastPassAt: NOW - 3_600_000 }, NOW)!;
    expect(stale.status).toBe("warn");
    expect(stale.summary).toContain("last ran 60 min ago");
    // A quiet pass records itself every 5 minutes: 9 minutes is on time, 11 is late.
    expect(recoveryCheck(e, { intervalMs: 60_000, lastPassAt: NOW - 9 * 60_000 }, NOW)!.status).toBe("ok");
    expect(recoveryCheck(e, { intervalMs: 60_000, lastPassAt: NOW - 11 * 60_000 }, NOW)!.status).toBe("warn");
  });

  it("nothing finds its lost deliveries: fail", () => {
    const c = recoveryCheck(
      repository({ recovery: facts([{ kind: "app", status: "not_found", detail: "404 Not Found", since: NOW }]) }),
      ON,
      NOW,
    )!;
    expect(c.status).toBe("fail");
    expect(c.fix).toContain("webhook URL");
  });

  it("no webhook scale set: skipped; older facts without recovery: no check", () => {
    expect(recoveryCheck(repository({ recovery: null }), ON, NOW)!.status).toBe("skip");
    expect(recoveryCheck(repository(), ON, NOW)).toBeNull();
  });
});
