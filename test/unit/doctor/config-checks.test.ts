import { describe, expect, it } from "vitest";
import {
  accessCheck,
  adminAuthCheck,
  encryptionKeyCheck,
  instanceTokenSecretCheck,
  metricsTokenCheck,
  publicUrlCheck,
  publicUrlReachableCheck,
  webhookUrlOf,
} from "../../../src/doctor/config-checks";
import { config, err, ok } from "./fixtures";

const accessOn = {
  teamDomainSet: true,
  teamDomain: "myteam.cloudflareaccess.com",
  audSet: true,
  certsUrl: "https://myteam.cloudflareaccess.com/cdn-cgi/access/certs",
};

describe("PUBLIC_URL", () => {
  it("https on a public host passes and names the webhook URL", () => {
    const c = publicUrlCheck(config({ publicUrl: "https://er.example.com/" }));
    expect(c.status).toBe("ok");
    expect(c.summary).toContain("https://er.example.com/webhooks/github");
    expect(webhookUrlOf("https://er.example.com/")).toBe("https://er.example.com/webhooks/github");
  });

  it.each([
    [null, "fail", /not set/],
    ["er.example.com", "fail", /is not a URL/],
    ["ftp://er.example.com", "fail", /must be http/],
    ["http://er.example.com", "fail", /plain http/],
    ["http://127.0.0.1:8787", "warn", /loopback/],
    ["https://er.example.com/?x=1", "warn", /query or fragment/],
  ] as const)("%s → %s", (publicUrl, status, summary) => {
    const c = publicUrlCheck(config({ publicUrl }));
    expect(c.status).toBe(status);
    expect(c.summary).toMatch(summary);
    expect(c.fix).toMatch(/PUBLIC_URL/);
  });

  it("no webhook URL without a usable PUBLIC_URL", () => {
    expect(webhookUrlOf(null)).toBeNull();
    expect(webhookUrlOf("nope")).toBeNull();
  });
});

describe("PUBLIC_URL seen from inside", () => {
  it("this request coming in at PUBLIC_URL's origin is the evidence", () => {
    expect(publicUrlReachableCheck(config()).status).toBe("ok");
  });

  it("another origin: skipped, pointing at the CLI (a Worker cannot fetch itself)", () => {
    const c = publicUrlReachableCheck(config({ requestOrigin: "http://127.0.0.1:8787" }));
    expect(c.status).toBe("skip");
    expect(c.summary).toMatch(/1042.*edgerunner doctor/);
  });

  it("nothing to compare: skipped", () => {
    expect(publicUrlReachableCheck(config({ requestOrigin: null })).status).toBe("skip");
    expect(publicUrlReachableCheck(config({ publicUrl: null })).status).toBe("skip");
  });
});

describe("secrets", () => {
  it("no ADMIN_TOKEN and no Access: nobody signs in", () => {
    const c = adminAuthCheck(config({ adminToken: { set: false, length: 0 } }));
    expect([c.status, c.fix]).toEqual(["fail", expect.stringContaining("wrangler secret put ADMIN_TOKEN")]);
    expect(adminAuthCheck(config({ adminToken: { set: false, length: 0 }, access: { ...accessOn, certs: null } })).status).toBe("ok");
  });

  it("a short ADMIN_TOKEN or INSTANCE_TOKEN_SECRET is a warning", () => {
    expect(adminAuthCheck(config({ adminToken: { set: true, length: 8 } })).status).toBe("warn");
    expect(instanceTokenSecretCheck(config({ instanceTokenSecret: { set: true, length: 8 } })).status).toBe("warn");
    expect(instanceTokenSecretCheck(config({ instanceTokenSecret: { set: false, length: 0 } })).status).toBe("fail");
  });

  it.each([
    [{ set: false, bytes: null }, /not set/],
    [{ set: true, bytes: null }, /not base64/],
    [{ set: true, bytes: 16 }, /16 bytes, not 32/],
  ])("ENCRYPTION_KEY %o fails", (encryptionKey, summary) => {
    const c = encryptionKeyCheck(config({ encryptionKey }));
    expect(c.status).toBe("fail");
    expect(c.summary).toMatch(summary);
    expect(c.fix).toMatch(/ENCRYPTION_KEY/);
  });

  it("a bad previous key fails (the keyring would not open anything); good ones are mentioned", () => {
    expect(encryptionKeyCheck(config({ previousKeys: { count: 2, bad: 1 } })).status).toBe("fail");
    const rotating = encryptionKeyCheck(config({ previousKeys: { count: 1, bad: 0 } }));
    expect([rotating.status, rotating.summary]).toEqual(["ok", expect.stringContaining("1 previous key")]);
  });

  it("no METRICS_TOKEN is a warning with both ways out", () => {
    const c = metricsTokenCheck(config({ metricsToken: false }));
    expect(c.status).toBe("warn");
    expect(c.fix).toMatch(/METRICS_TOKEN.*token create/);
    expect(metricsTokenCheck(config()).status).toBe("ok");
  });
});

describe("Cloudflare Access", () => {
  it("off is fine", () => {
    expect(accessCheck(config()).status).toBe("ok");
  });

  it("one of the two variables alone fails, naming the missing one", () => {
    const c = accessCheck(config({ access: { ...accessOn, audSet: false, certs: null } }));
    expect(c.status).toBe("fail");
    expect(c.summary).toMatch(/ACCESS_TEAM_DOMAIN is set without ACCESS_AUD/);
  });

  it("a team domain that is not a domain fails", () => {
    expect(accessCheck(config({ access: { ...accessOn, teamDomain: null, certs: null } })).status).toBe("fail");
  });

  it("the team's keys must be fetchable and not empty", () => {
    expect(accessCheck(config({ access: { ...accessOn, certs: ok({ keys: 2 }) } }))).toMatchObject({
      status: "ok",
      summary: expect.stringMatching(/2 signing key/),
    });
    expect(accessCheck(config({ access: { ...accessOn, certs: ok({ keys: 0 }) } })).status).toBe("fail");
    const down = accessCheck(config({ access: { ...accessOn, certs: err({ kind: "unreachable", message: "timeout" }) } }));
    expect([down.status, down.summary]).toEqual(["fail", expect.stringMatching(/no answer \(timeout\).*503/)]);
  });
});
