/**
 * `setup --plan free|paid`: the Workers plan the coordinator runs on, as the `[vars]` it is
 * deployed with. This file is the one place the CLI knows them; the coordinator reads
 * CLOUDFLARE_PLAN in src/lib/invocation-cost.ts (usePlan: its per-invocation budgets),
 * RECONCILE_INTERVAL_SECONDS and ORPHAN_CHECK_SECONDS in src/scaleset/settings.ts.
 *
 * On the Free plan every invocation may make 50 subrequests and 50 D1 queries, and D1 and
 * Durable Object storage allow 100,000 rows written a day, so a free deployment also ticks less
 * often when idle. `--plan paid` sets CLOUDFLARE_PLAN alone: a paid deployment keeps its own
 * tuned values, and the Free plan's ones left from an earlier `--plan free` are said, not changed.
 */
import { UsageError } from "../errors.ts";
import { committedVar } from "./deploy-config.ts";

export const PLAN_NAMES = ["free", "paid"] as const;
export type CloudflarePlan = (typeof PLAN_NAMES)[number];

/** The vars each plan is deployed with. */
export const PLAN_VARS: Record<CloudflarePlan, Record<string, string>> = {
  free: { CLOUDFLARE_PLAN: "free", RECONCILE_INTERVAL_SECONDS: "120", ORPHAN_CHECK_SECONDS: "900" },
  paid: { CLOUDFLARE_PLAN: "paid" },
};

/** What each var is, as its progress line says it; the defaults are src/scaleset/settings.ts's. */
const ABOUT: Record<string, string> = {
  CLOUDFLARE_PLAN: "the per-invocation budgets the coordinator keeps to",
  RECONCILE_INTERVAL_SECONDS: "the idle tick, default 30; nudges still reconcile at once",
  ORPHAN_CHECK_SECONDS: "how often a scale set lists its machines at the cloud, default 300",
};

/** The coordinator's own values when the var is not set (src/scaleset/settings.ts). */
const DEFAULTS: Record<string, string> = { RECONCILE_INTERVAL_SECONDS: "30", ORPHAN_CHECK_SECONDS: "300" };

/** The line after the vars: why the plan wants them (Cloudflare's limits: src/usage/price-table.ts). */
export const PLAN_WHY: Record<CloudflarePlan, string | undefined> = {
  free:
    "Free plan: every invocation stays within 50 subrequests and 50 D1 queries; the idle tick is 2 minutes." +
    " `edgerunner doctor` warns when this month's usage nears a Free plan limit.",
  paid: undefined,
};

/** Every var a plan sets: the ones setup keeps from the last run when --plan is not given. */
const PLAN_KEYS = [...new Set(Object.values(PLAN_VARS).flatMap((vars) => Object.keys(vars)))];

/** --plan's value, checked before anything runs. */
export function parsePlan(value: string | undefined): CloudflarePlan | undefined {
  if (value === undefined) return undefined;
  const plan = PLAN_NAMES.find((p) => p === value);
  if (plan) return plan;
  throw new UsageError(`--plan: one of ${PLAN_NAMES.join(", ")}, not "${value}"`);
}

/**
 * The plan's vars to deploy with: the last setup's (`last`, its deploy settings' vars), with
 * --plan's on top. Without --plan the last setup's stand as they were (none on a first run).
 */
export function planVars(plan: CloudflarePlan | undefined, last: Record<string, string>): Record<string, string> {
  const kept = Object.fromEntries(PLAN_KEYS.filter((k) => last[k] !== undefined).map((k) => [k, last[k]!]));
  return { ...kept, ...(plan ? PLAN_VARS[plan] : {}) };
}

/**
 * What setup says about --plan once the deploy config is written (or would be): a line per var
 * it sets (`✓` when the last setup had it already), why, and under `--plan paid` the Free
 * plan's values it leaves in place, from the last setup or the committed file (`committed`).
 */
export function planLines(
  plan: CloudflarePlan,
  last: Record<string, string>,
  committed: string,
  files: { deploy: string; committed: string },
  dryRun: boolean,
): string[] {
  const lines = Object.entries(PLAN_VARS[plan]).map(([key, value]) => {
    const what = `var ${key} = "${value}" (${ABOUT[key]})`;
    if (last[key] === value) return `✓ ${what} already set`;
    return dryRun ? `· would set ${what}` : `+ set ${what}`;
  });
  const why = PLAN_WHY[plan];
  if (why) lines.push(`    ${why}`);
  if (plan === "paid") {
    const left = Object.entries(PLAN_VARS.free).filter(
      ([key, value]) => key in DEFAULTS && (last[key] ?? committedVar(committed, key)) === value,
    );
    if (left.length) {
      const which = left.map(([key, value]) => `${key} = "${value}"`).join(" and ");
      const defaults = left.map(([key]) => DEFAULTS[key]).join(" and ");
      const how = left.some(([key]) => last[key] !== undefined)
        ? `delete ${files.deploy} and run \`edgerunner setup --plan paid\` again (with --public-url, if you gave one)`
        : `remove ${left.length === 1 ? "it" : "them"} from ${files.committed}`;
      lines.push(
        `! ${which} ${left.length === 1 ? "was" : "were"} chosen for the Free plan; --plan paid leaves ${left.length === 1 ? "it" : "them"}.` +
          ` For the default${left.length === 1 ? "" : "s"} (${defaults}), ${how}.`,
      );
    }
  }
  return lines;
}
