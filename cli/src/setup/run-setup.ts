/**
 * `edgerunner setup`, carried out: the coordinator (login, D1 database, deploy config,
 * migrations, secrets, deploy, PUBLIC_URL), then a shim when asked (shim-setup.ts), then
 * the profile and the summary. Every decision is a function of plan.ts; this file runs wrangler
 * and prints a progress line per step. Run twice, it keeps what exists and repairs what is missing.
 */
import { UsageError } from "../errors.ts";
import { type CloudflarePlan, PLAN_NAMES, planLines, planVars } from "./cloudflare-plan.ts";
import type { DeploySettings } from "./deploy-config.ts";
import { COORDINATOR, committedConfig, deployConfig, readCommittedConfig, readSettings } from "./deploy-config-file.ts";
import { afterDeploy, COORDINATOR_SECRETS, checkLogin, chosenPublicUrl, initialPublicUrl, missingSecrets, planDatabase } from "./plan.ts";
import { saveSetupProfile } from "./save-profile.ts";
import { change, readOnly, type SetupContext, secretNames, writeConfig } from "./setup-context.ts";
import { SHIM_KINDS } from "./shim-kinds.ts";
import { shimVars } from "./shim-settings.ts";
import { type ShimReport, setupShim } from "./shim-setup.ts";
import { failed } from "./wrangler.ts";
import { deployTargets, migrationsApplied, parseD1List, parseWhoami, workersDevUrl } from "./wrangler-output.ts";

export interface SetupReport {
  dry_run: boolean;
  public_url: string | null;
  setup_url: string | null;
  database: { name: string; id: string | null; created: boolean };
  /** The CLOUDFLARE_PLAN deployed with (--plan, or the last setup's); null: unset, the coordinator's default (paid). */
  plan: CloudflarePlan | null;
  /** Secrets this run generated and put (names only). */
  secrets_set: string[];
  /** Only when this run created it: it cannot be read back from Cloudflare later. */
  admin_token?: string;
  profile?: string;
  shim?: ShimReport;
}

export async function runSetup(ctx: SetupContext): Promise<SetupReport> {
  const { opts, say } = ctx;
  // Before anything runs: the committed configs setup builds on (the checkout's root), and the
  // shim's vars, so a bad one (an AWS_REGION in the environment) stops setup before it deploys.
  const committed = readCommittedConfig(opts.root, COORDINATOR);
  const shim = opts.shim ? SHIM_KINDS[opts.shim] : undefined;
  const vars = shim ? shimVars(opts.root, shim, opts.shimVars, ctx.io.env) : {};
  if (opts.dryRun) say("Dry run: read-only checks run; every command that would change something is printed instead.");

  // 1. Who is logged in, and to which account.
  say("→ checking the Cloudflare login (wrangler whoami)");
  const who = await ctx.wrangler.run(["whoami", "--json"]);
  const whoami = parseWhoami(who.stdout);
  if (!whoami && who.code !== 0) throw failed(["whoami", "--json"], who);
  const login = checkLogin(whoami, opts.accountId);
  if (!login.ok) throw new UsageError(login.message, login.hint);
  const account = login.account ? ` (account ${login.account.name ? `${login.account.name}, ` : ""}${login.account.id})` : "";
  say(`✓ logged in to Cloudflare${whoami?.email ? ` as ${whoami.email}` : ""}${account}`);

  // 2. The D1 database: reused by name, created when missing (a first run, or one deleted since).
  const listArgs = ["d1", "list", "--json"];
  const listed = parseD1List((await readOnly(ctx, listArgs)).stdout);
  if (!listed) throw failed(listArgs, { code: 0, stdout: "(no JSON list)", stderr: "" });
  const dbPlan = planDatabase(listed, opts.database);
  let databaseId: string | undefined;
  if (dbPlan.kind === "reuse") {
    databaseId = dbPlan.id;
    say(`✓ D1 database ${opts.database} (id ${databaseId}) already exists`);
  } else {
    say(opts.dryRun ? `· would create D1 database ${opts.database}` : `→ creating D1 database ${opts.database}`);
    if (await change(ctx, ["d1", "create", opts.database])) {
      const again = parseD1List((await readOnly(ctx, listArgs)).stdout) ?? [];
      const created = planDatabase(again, opts.database);
      if (created.kind !== "reuse")
        throw failed(["d1", "create", opts.database], { code: 0, stdout: "the new database is not in `wrangler d1 list`", stderr: "" });
      databaseId = created.id;
      say(`+ created D1 database ${opts.database} (id ${databaseId})`);
    }
  }

  // 3. The deploy config: the committed wrangler.toml with this account's database and URL,
  // and the Workers plan's vars (--plan, or the last setup's).
  const last = readSettings(opts.root, COORDINATOR)?.vars ?? {};
  const storedUrl = last.PUBLIC_URL;
  let publicUrl = initialPublicUrl(opts.publicUrl, storedUrl);
  const plan = planVars(opts.plan, last);
  const settings = (): DeploySettings => ({
    database: { name: opts.database, id: databaseId ?? "(the id wrangler d1 create prints)" },
    vars: { ...(publicUrl ? { PUBLIC_URL: publicUrl } : {}), ...plan },
  });
  const described = () =>
    `D1 ${opts.database}, PUBLIC_URL ${publicUrl ?? "learned from the first deploy"}` +
    (plan.CLOUDFLARE_PLAN ? `, CLOUDFLARE_PLAN ${plan.CLOUDFLARE_PLAN}` : "");
  writeConfig(ctx, COORDINATOR, settings(), described());
  const config = deployConfig(COORDINATOR);
  if (opts.plan) {
    const files = { deploy: config, committed: committedConfig(COORDINATOR) };
    for (const line of planLines(opts.plan, last, committed, files, opts.dryRun)) say(line);
  }

  // 4. Migrations: wrangler applies the pending ones (none on a second run).
  say(opts.dryRun ? "· would apply pending D1 migrations" : "→ applying D1 migrations");
  const migrated = await change(ctx, ["d1", "migrations", "apply", "DB", "--remote", "-c", config]);
  if (migrated) {
    const n = migrationsApplied(migrated.stdout);
    say(n > 0 ? `+ applied ${n} D1 migration${n === 1 ? "" : "s"}` : "✓ D1 migrations: none pending");
  }

  // 5. Secrets before the code, so the coordinator never runs without them (on a first run
  // `secret bulk` creates the Worker); existing ones are kept: their values cannot be read back.
  const existing = await secretNames(ctx, COORDINATOR);
  for (const s of COORDINATOR_SECRETS) if (existing.includes(s.name)) say(`✓ secret ${s.name} already set (kept)`);
  const missing = missingSecrets(
    existing,
    COORDINATOR_SECRETS.map((s) => s.name),
  );
  const values: Record<string, string> = {};
  for (const s of COORDINATOR_SECRETS) if (missing.includes(s.name)) values[s.name] = ctx.generate(s.kind);
  if (missing.length) {
    say(`${opts.dryRun ? "· would set" : "→ setting"} secret${missing.length === 1 ? "" : "s"} ${missing.join(", ")} (generated)`);
    const shown = JSON.stringify(Object.fromEntries(missing.map((n) => [n, "<generated>"])));
    if (await change(ctx, ["secret", "bulk", "-c", config], { stdin: JSON.stringify(values), shownStdin: shown })) {
      for (const name of missing) say(`+ set secret ${name} (generated)`);
    }
    if (missing.includes("ENCRYPTION_KEY") && dbPlan.kind === "reuse") {
      say(
        "! ENCRYPTION_KEY was missing and is new: what the existing database holds sealed with an earlier key cannot be opened." +
          " Put the old key back (`npx wrangler secret put ENCRYPTION_KEY -c wrangler.deploy.toml`) if you have it, or enter those secrets again.",
      );
    }
  }

  // 6. Deploy. Without --public-url the URL is the workers.dev one wrangler reports; a deploy
  // made with another PUBLIC_URL (the first one: it is not known before) is made once more.
  // A failure from here on must not lose a new admin token: Cloudflare has it and will not show it again.
  const adminToken = opts.dryRun ? undefined : values.ADMIN_TOKEN;
  try {
    say(opts.dryRun ? "· would deploy the coordinator" : "→ deploying the coordinator (wrangler deploy)");
    const deployArgs = ["deploy", "-c", config];
    const deployed = await change(ctx, deployArgs, { outputFile: true });
    if (deployed) {
      const decision = afterDeploy(
        chosenPublicUrl(opts.publicUrl, storedUrl),
        publicUrl,
        workersDevUrl(deployTargets(deployed.outputFile ?? "")),
      );
      if (decision.kind === "refuse") throw new UsageError(decision.message, decision.hint);
      if (decision.kind === "redeploy") {
        publicUrl = decision.url;
        say(`+ PUBLIC_URL is ${publicUrl} (where wrangler deployed it); deploying once more with it`);
        writeConfig(ctx, COORDINATOR, settings(), described());
        await change(ctx, deployArgs, { outputFile: true });
      }
      publicUrl = decision.url;
      say(`✓ coordinator deployed at ${publicUrl}`);
    } else if (!publicUrl) {
      say("    (PUBLIC_URL: the workers.dev URL that deploy reports; setup writes it into wrangler.deploy.toml and deploys once more)");
    }

    const report: SetupReport = {
      dry_run: opts.dryRun,
      public_url: publicUrl ?? null,
      setup_url: publicUrl ? `${publicUrl}/ui/setup` : null,
      database: { name: opts.database, id: databaseId ?? null, created: dbPlan.kind === "create" },
      plan: PLAN_NAMES.find((name) => name === plan.CLOUDFLARE_PLAN) ?? null,
      secrets_set: opts.dryRun ? [] : missing,
      ...(adminToken ? { admin_token: adminToken } : {}),
    };
    if (adminToken && publicUrl && opts.saveProfile) {
      const saved = saveSetupProfile(ctx.io.env, opts.profile, publicUrl, adminToken);
      say(saved.line);
      if (saved.profile) report.profile = saved.profile;
    }
    if (shim) report.shim = await setupShim(ctx, shim, vars, { url: publicUrl, createdAdminToken: adminToken });
    return report;
  } catch (e) {
    if (adminToken) say(["", ...tokenLines(adminToken, undefined)].join("\n"));
    throw e;
  }
}

/** The admin token, said once, and where else it is kept. */
function tokenLines(token: string, profile: string | undefined): string[] {
  return [
    "Admin token (shown this once; Cloudflare keeps it as the ADMIN_TOKEN secret and cannot show it again):",
    `  ${token}`,
    profile
      ? `It is saved in the CLI profile "${profile}": \`edgerunner --profile ${profile} scaleset list\` works now.`
      : "Keep it in a password manager.",
  ];
}

/** The lines people read at the end: where it runs, where to go next, and the admin token once. */
export function summary(r: SetupReport): string {
  if (r.dry_run) return "\nDry run: nothing was changed. Run without --dry-run to do it.\n";
  const lines = ["", `Edgerunner is deployed at ${r.public_url}`, `Next: open ${r.setup_url} to connect GitHub and create a first runner.`];
  if (r.admin_token) lines.push("", ...tokenLines(r.admin_token, r.profile));
  if (r.shim) {
    const kind = SHIM_KINDS[r.shim.shim];
    lines.push(
      "",
      `${kind.target.label} at ${r.shim.url}, registered as provider "${r.shim.provider}": create a scale set on it (${kind.doc}).`,
    );
  }
  return lines.join("\n") + "\n";
}
