/**
 * `edgerunner setup`: from a Cloudflare login to a deployed coordinator (and, with `--shim
 * aws-ec2|gce|hetzner`, that shim registered as a provider). The steps are in cli/src/setup/;
 * this file reads the options and prints. See docs/deploy.md.
 */
import { type Command, type OptionSpec, str, type Values } from "../command.ts";
import { normalizeUrl } from "../config.ts";
import { UsageError } from "../errors.ts";
import { PLAN_NAMES, parsePlan } from "../setup/cloudflare-plan.ts";
import { generateSecret } from "../setup/generate-secret.ts";
import { runSetup, summary } from "../setup/run-setup.ts";
import { isShimName, SHIM_NAMES, type ShimName, shimVarOptions } from "../setup/shim-kinds.ts";
import { parseShimVar } from "../setup/shim-settings.ts";
import { spawnWrangler } from "../setup/wrangler.ts";

/** Each shim's vars as options of their own (--aws-region, --gce-zones): one shim's option means nothing to another. */
const shimVarSpecs: Record<string, OptionSpec> = Object.fromEntries(
  shimVarOptions().map(({ kind, v }) => [v.option, { type: "string", arg: v.arg, description: `with --shim ${kind.name}: ${v.about}` }]),
);

function shimOption(values: Values): ShimName | undefined {
  const shim = str(values, "shim");
  if (shim === undefined || isShimName(shim)) return shim;
  throw new UsageError(`--shim: one of ${SHIM_NAMES.join(", ")}, not "${shim}"`);
}

/** The options given for the shim's vars, checked now so a typo fails before anything runs. */
function givenShimVars(values: Values, shim: ShimName | undefined): Record<string, string> {
  const given: Record<string, string> = {};
  for (const { kind, v } of shimVarOptions()) {
    const value = str(values, v.option);
    if (value === undefined) continue;
    if (kind.name !== shim) throw new UsageError(`--${v.option} goes with --shim ${kind.name}`);
    given[v.name] = parseShimVar(v, value);
  }
  return given;
}

export const setupCommands: Command[] = [
  {
    words: ["setup"],
    summary: "Deploy the coordinator to your Cloudflare account: D1, secrets, migrations, deploy (run again to repair)",
    options: {
      database: { type: "string", arg: "NAME", description: "the D1 database to create or reuse (default edgerunner)" },
      "public-url": {
        type: "string",
        arg: "URL",
        description: "the coordinator's URL when it has a route or custom domain (default: its workers.dev URL)",
      },
      "account-id": {
        type: "string",
        arg: "ID",
        description: "the Cloudflare account, when your login has several (or set CLOUDFLARE_ACCOUNT_ID)",
      },
      plan: {
        type: "string",
        arg: PLAN_NAMES.join("|"),
        description:
          "the account's Workers plan, deployed as CLOUDFLARE_PLAN; free also sets the longer idle intervals its limits want (default: the last setup's, else paid)",
      },
      "dry-run": { type: "boolean", description: "print what would change (read-only checks still run)" },
      shim: { type: "string", arg: "NAME", description: `also deploy a provider shim and register it: ${SHIM_NAMES.join(", ")}` },
      ...shimVarSpecs,
      "provider-name": {
        type: "string",
        arg: "NAME",
        description: "with --shim: the provider's name on the coordinator (default: the shim's name)",
      },
      "save-profile": { type: "boolean", description: "save a new admin token as a CLI profile (default; --no-save-profile: do not)" },
    },
    example: "npx wrangler login && npx edgerunner setup",
    run: async (ctx) => {
      const v = ctx.values;
      const shim = shimOption(v);
      const shimVars = givenShimVars(v, shim);
      const plan = parsePlan(str(v, "plan"));
      if (str(v, "provider-name") !== undefined && !shim) throw new UsageError("--provider-name goes with --shim");
      const database = str(v, "database") ?? "edgerunner";
      // D1's own rule for names; checked here so a typo fails before anything runs.
      if (!/^[a-z0-9][a-z0-9-]{0,62}$/.test(database))
        throw new UsageError(`--database: lowercase letters, digits and dashes, not "${database}"`);
      if (ctx.global.url) throw new UsageError("setup takes --public-url for the coordinator's URL, not --url");
      const publicUrl = str(v, "public-url");
      const accountId = str(v, "account-id") ?? ctx.io.env.CLOUDFLARE_ACCOUNT_ID;
      const env = { ...ctx.io.env, ...(accountId ? { CLOUDFLARE_ACCOUNT_ID: accountId } : {}) };
      const root = process.cwd();
      const json = v.json === true;
      const report = await runSetup({
        opts: {
          root,
          database,
          ...(publicUrl ? { publicUrl: normalizeUrl(publicUrl, "--public-url") } : {}),
          ...(accountId ? { accountId } : {}),
          ...(plan ? { plan } : {}),
          dryRun: v["dry-run"] === true,
          ...(shim ? { shim } : {}),
          shimVars,
          ...(str(v, "provider-name") ? { providerName: str(v, "provider-name")! } : {}),
          saveProfile: v["save-profile"] !== false,
          ...(ctx.global.profile ? { profile: ctx.global.profile } : {}),
        },
        io: ctx.io,
        wrangler: spawnWrangler(root, env),
        // With --json the progress goes to stderr, so stdout holds only the JSON document.
        say: (line) => (json ? ctx.io.stderr : ctx.io.stdout)(`${line}\n`),
        generate: generateSecret,
        sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
      });
      return { data: report, text: summary(report) };
    },
  },
];
