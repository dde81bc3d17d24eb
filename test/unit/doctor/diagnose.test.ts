import { describe, expect, it } from "vitest";
import { diagnose } from "../../../src/doctor/diagnose";
import type { DoctorFacts } from "../../../src/doctor/facts";
import { DoctorReportSchema } from "../../../src/doctor/report";
import { usageReport } from "../../../src/usage/usage-report";
import { config, NOW, patCredentials, provider, refused, repository, scaleSet } from "./fixtures";

const facts = (over: Partial<DoctorFacts> = {}): DoctorFacts => ({
  now: NOW,
  config: config(),
  credentials: [patCredentials()],
  entities: [repository()],
  providers: [provider()],
  scaleSets: [scaleSet()],
  unmatched: { count: 0, labelSets: [] },
  ...over,
});

describe("the report", () => {
  it("a working setup: ok, every check in the order a job travels, valid against the API's schema", () => {
    const r = diagnose(facts());
    expect(r.ok).toBe(true);
    expect(DoctorReportSchema.safeParse(r).success).toBe(true);
    expect(r.checked_at).toBe("2026-11-22T10:00:00.000Z");
    expect(r.public_url).toBe("https://edgerunner.example.workers.dev");
    expect(r.checks.map((c) => c.id.split(":")[0])).toEqual([
      "config.public_url",
      "config.public_url_reachable",
      "config.admin_auth",
      "config.encryption_key",
      "config.instance_token_secret",
      "config.metrics_token",
      "config.access",
      "credentials.health",
      "entity.access",
      "entity.webhook",
      "provider.shim",
      "scaleset.ready",
      "scaleset.runners",
      "scaleset.labels",
      "jobs.unmatched",
    ]);
    expect(r.checks.filter((c) => c.status !== "ok").map((c) => c.id)).toEqual([]);
  });

  it("one broken link: not ok, and the scale set standing on it fails too", () => {
    const r = diagnose(facts({ providers: [provider({ capabilities: refused(401, "bad signature") })] }));
    expect(r.ok).toBe(false);
    const failed = r.checks.filter((c) => c.status === "fail").map((c) => c.id);
    expect(failed).toEqual(["provider.shim:prov", "scaleset.ready:ss"]);
  });

  it("warnings alone keep it ok", () => {
    const r = diagnose(facts({ config: config({ metricsToken: false }) }));
    expect(r.ok).toBe(true);
    expect(r.checks.find((c) => c.id === "config.metrics_token")?.status).toBe("warn");
  });

  it("this month's usage: checked after the configuration, before the links it is under", () => {
    const report = usageReport([{ day: "2026-11-22", unit: "d1_rows_written", kind: "reconcile", value: 120_000 }], "2026-11", NOW);
    const r = diagnose(facts({ usage: { planSetting: "free", report } }));
    const ids = r.checks.map((c) => c.id.split(":")[0]);
    expect(ids.indexOf("cloudflare.usage")).toBe(ids.indexOf("config.access") + 1);
    expect(ids[ids.indexOf("cloudflare.usage") + 1]).toBe("credentials.health");
    // Past the Free plan's 100,000 D1 rows written today: the report is not ok.
    expect(r.ok).toBe(false);
    expect(r.checks.find((c) => c.id === "cloudflare.usage")?.status).toBe("fail");
    expect(diagnose(facts({ usage: null })).checks.some((c) => c.id === "cloudflare.usage")).toBe(false);
  });

  it("limited to a scale set: no unmatched-jobs check", () => {
    expect(diagnose(facts({ unmatched: null })).checks.some((c) => c.id === "jobs.unmatched")).toBe(false);
  });

  it("never carries anything but facts: no field of it holds a secret it was not given", () => {
    const text = JSON.stringify(diagnose(facts()));
    expect(text).not.toMatch(/ghp_|BEGIN .*PRIVATE KEY/);
  });
});
