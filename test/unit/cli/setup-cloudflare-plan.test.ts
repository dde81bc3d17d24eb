/** `setup --plan free|paid`, its pure parts: the option, the vars it deploys with, and what it says. With the CLI as a process: setup.test.ts. */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { UsageError } from "../../../cli/src/errors.ts";
import { PLAN_VARS, parsePlan, planLines, planVars } from "../../../cli/src/setup/cloudflare-plan.ts";
import { committedVar, readDeploySettings, renderDeployConfig } from "../../../cli/src/setup/deploy-config.ts";

const committed = readFileSync(new URL("../../../wrangler.toml", import.meta.url), "utf8");
const files = { deploy: "wrangler.deploy.toml", committed: "wrangler.toml" };
const FREE_TICKS = { RECONCILE_INTERVAL_SECONDS: "120", ORPHAN_CHECK_SECONDS: "900" };

describe("--plan", () => {
  it("is free or paid; anything else is a usage error naming both", () => {
    expect(parsePlan("free")).toBe("free");
    expect(parsePlan("paid")).toBe("paid");
    expect(parsePlan(undefined)).toBeUndefined();
    for (const bad of ["Free", "pro", ""]) {
      expect(() => parsePlan(bad)).toThrow(UsageError);
      expect(() => parsePlan(bad)).toThrow(`--plan: one of free, paid, not "${bad}"`);
    }
  });

  it("free is the plan, a 2-minute idle tick and a 15-minute orphan check; paid is the plan alone", () => {
    expect(PLAN_VARS.free).toEqual({ CLOUDFLARE_PLAN: "free", ...FREE_TICKS });
    expect(PLAN_VARS.paid).toEqual({ CLOUDFLARE_PLAN: "paid" });
  });
});

describe("the plan's vars", () => {
  it("free: the three vars, over what the last setup had", () => {
    expect(planVars("free", {})).toEqual(PLAN_VARS.free);
    expect(planVars("free", { PUBLIC_URL: "https://x", CLOUDFLARE_PLAN: "paid", RECONCILE_INTERVAL_SECONDS: "10" })).toEqual(
      PLAN_VARS.free,
    );
  });

  it("paid: CLOUDFLARE_PLAN only; the last setup's intervals stay, whatever they are", () => {
    expect(planVars("paid", {})).toEqual({ CLOUDFLARE_PLAN: "paid" });
    expect(planVars("paid", PLAN_VARS.free)).toEqual({ CLOUDFLARE_PLAN: "paid", ...FREE_TICKS });
    expect(planVars("paid", { RECONCILE_INTERVAL_SECONDS: "45" })).toEqual({ CLOUDFLARE_PLAN: "paid", RECONCILE_INTERVAL_SECONDS: "45" });
  });

  it("without --plan: none on a first run, the last setup's plan vars (and no others) after", () => {
    expect(planVars(undefined, {})).toEqual({});
    expect(planVars(undefined, { PUBLIC_URL: "https://x" })).toEqual({});
    expect(planVars(undefined, { PUBLIC_URL: "https://x", ...PLAN_VARS.free })).toEqual(PLAN_VARS.free);
  });

  it("go into the deploy config's [vars], next to the committed file's, and are read back from its first line", () => {
    const settings = { database: { name: "runners", id: "id-1" }, vars: { PUBLIC_URL: "https://ci.example.com", ...planVars("free", {}) } };
    const text = renderDeployConfig(committed, settings, "wrangler.toml");
    expect(text).toContain('CLOUDFLARE_PLAN = "free"');
    expect(text).toContain('RECONCILE_INTERVAL_SECONDS = "120"');
    expect(text).toContain('ORPHAN_CHECK_SECONDS = "900"');
    for (const [key, value] of Object.entries({ ...PLAN_VARS.free, LOG_LEVEL: "info" })) expect(committedVar(text, key)).toBe(value);
    expect(readDeploySettings(text)).toEqual(settings);

    // Paid over that: the plan changes, the intervals the last setup wrote stay.
    const paid = renderDeployConfig(
      committed,
      { ...settings, vars: { PUBLIC_URL: "https://ci.example.com", ...planVars("paid", settings.vars) } },
      "wrangler.toml",
    );
    expect(committedVar(paid, "CLOUDFLARE_PLAN")).toBe("paid");
    expect(committedVar(paid, "RECONCILE_INTERVAL_SECONDS")).toBe("120");
    expect(committedVar(paid, "ORPHAN_CHECK_SECONDS")).toBe("900");
    expect(paid.match(/^CLOUDFLARE_PLAN = /gm)).toHaveLength(1);

    // No --plan on a first run: the config has no plan at all (the coordinator's default, paid).
    const none = renderDeployConfig(
      committed,
      { ...settings, vars: { PUBLIC_URL: "https://ci.example.com", ...planVars(undefined, {}) } },
      "wrangler.toml",
    );
    expect(none).not.toContain("CLOUDFLARE_PLAN");
    expect(committedVar(none, "RECONCILE_INTERVAL_SECONDS")).toBeUndefined();
  });
});

describe("what setup says", () => {
  const WHY =
    "    Free plan: every invocation stays within 50 subrequests and 50 D1 queries; the idle tick is 2 minutes." +
    " `edgerunner doctor` warns when this month's usage nears a Free plan limit.";

  it("free: a line per var, then why", () => {
    expect(planLines("free", {}, committed, files, false)).toEqual([
      '+ set var CLOUDFLARE_PLAN = "free" (the per-invocation budgets the coordinator keeps to)',
      '+ set var RECONCILE_INTERVAL_SECONDS = "120" (the idle tick, default 30; nudges still reconcile at once)',
      '+ set var ORPHAN_CHECK_SECONDS = "900" (how often a scale set lists its machines at the cloud, default 300)',
      WHY,
    ]);
  });

  it("free under --dry-run says would; a var the last setup set already is ticked", () => {
    const lines = planLines("free", { CLOUDFLARE_PLAN: "free" }, committed, files, true);
    expect(lines[0]).toBe('✓ var CLOUDFLARE_PLAN = "free" (the per-invocation budgets the coordinator keeps to) already set');
    expect(lines[1]).toMatch(/^· would set var RECONCILE_INTERVAL_SECONDS = "120" /);
    expect(lines[2]).toMatch(/^· would set var ORPHAN_CHECK_SECONDS = "900" /);
    expect(lines[3]).toBe(WHY);
  });

  it("paid after free: sets the plan, and says the Free plan's intervals stay and how to drop them", () => {
    expect(planLines("paid", PLAN_VARS.free, committed, files, false)).toEqual([
      '+ set var CLOUDFLARE_PLAN = "paid" (the per-invocation budgets the coordinator keeps to)',
      '! RECONCILE_INTERVAL_SECONDS = "120" and ORPHAN_CHECK_SECONDS = "900" were chosen for the Free plan; --plan paid leaves them.' +
        " For the defaults (30 and 300), delete wrangler.deploy.toml and run `edgerunner setup --plan paid` again (with --public-url, if you gave one).",
    ]);
  });

  it("paid: one Free plan value left is named alone; values of the deployment's own are not remarked on", () => {
    const one = planLines("paid", { RECONCILE_INTERVAL_SECONDS: "120", ORPHAN_CHECK_SECONDS: "600" }, committed, files, false);
    expect(one[1]).toMatch(
      /^! RECONCILE_INTERVAL_SECONDS = "120" was chosen for the Free plan; --plan paid leaves it\. For the default \(30\), /,
    );
    expect(planLines("paid", { RECONCILE_INTERVAL_SECONDS: "60", ORPHAN_CHECK_SECONDS: "600" }, committed, files, false)).toHaveLength(1);
    expect(planLines("paid", {}, committed, files, false)).toEqual([
      '+ set var CLOUDFLARE_PLAN = "paid" (the per-invocation budgets the coordinator keeps to)',
    ]);
  });

  it("paid: Free plan values in the committed file are said too, with where to change them", () => {
    const edited = committed.replace("[vars]\n", '[vars]\nORPHAN_CHECK_SECONDS = "900"\n');
    const lines = planLines("paid", {}, edited, files, false);
    expect(lines[1]).toBe(
      '! ORPHAN_CHECK_SECONDS = "900" was chosen for the Free plan; --plan paid leaves it. For the default (300), remove it from wrangler.toml.',
    );
  });
});
