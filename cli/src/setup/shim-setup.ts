/**
 * `setup --shim NAME`: a shim Worker (its entry in shim-kinds.ts: shims/aws-ec2, shims/gce,
 * shims/hetzner) deployed with its vars and secrets, and registered with the coordinator as a
 * provider signed with the same SHIM_SECRET. SHIM_SECRET is generated; the cloud's credentials
 * come from the environment or are asked for in the terminal (keys not echoed), and the vars from
 * the options or the last setup (shim-settings.ts, before anything runs).
 * Existing secrets are kept, as for the coordinator.
 */
import { makeClient, unwrap } from "../client.ts";
import { configPath, readConfigFile } from "../config.ts";
import { ApiFailure, NetworkFailure, StepFailure, UsageError } from "../errors.ts";
import { deployConfig, type WorkerTarget } from "./deploy-config-file.ts";
import { adminTokenFor, needsNewShimSecret, type ProviderView, planProvider } from "./plan.ts";
import { change, type SetupContext, secretNames, writeConfig } from "./setup-context.ts";
import type { ShimKind, ShimName } from "./shim-kinds.ts";
import { cloudSecrets } from "./shim-settings.ts";
import { deployTargets, workersDevUrl } from "./wrangler-output.ts";

export interface ShimReport {
  shim: ShimName;
  url: string | null;
  provider: string;
  secrets_set: string[];
}

/** How often, and how long apart, the coordinator is asked before setup gives up (a new workers.dev name can take a moment). */
const API_ATTEMPTS = 10;
const API_RETRY_MS = 3000;

export async function setupShim(
  ctx: SetupContext,
  kind: ShimKind,
  vars: Record<string, string>,
  coordinator: { url: string | undefined; createdAdminToken: string | undefined },
): Promise<ShimReport> {
  const { opts, say } = ctx;
  const t = kind.target;
  const name = opts.providerName ?? kind.name;

  const described = Object.entries(vars).map(([k, v]) => `${k} ${v}`);
  writeConfig(ctx, t, { vars }, described.length ? described.join(", ") : "the committed settings");

  // The provider as the coordinator has it (read-only, so a dry run asks too when it can).
  const token = coordinator.url
    ? adminTokenFor(coordinator.createdAdminToken, ctx.io.env, readConfigFile(configPath(ctx.io.env))?.profiles ?? {}, coordinator.url)
    : undefined;
  const api = coordinator.url && token ? makeClient(coordinator.url, token, ctx.io.fetch) : undefined;
  if (!api && !opts.dryRun) {
    throw new UsageError(
      "the coordinator's admin token is needed to register the shim, and Cloudflare cannot show it again",
      `set EDGERUNNER_TOKEN, or save it with \`edgerunner login --url ${coordinator.url} --token-from-stdin\`, then run setup again`,
    );
  }
  let provider: ProviderView | undefined;
  if (api) provider = await findProvider(ctx, api, name, coordinator.url!);
  else if (!coordinator.url) say(`· provider "${name}" is looked up once the coordinator is deployed`);
  else say(`· cannot look up provider "${name}" without the admin token (EDGERUNNER_TOKEN or a profile for ${coordinator.url})`);

  // Secrets: SHIM_SECRET new when missing (or when no provider holds it); the cloud's from the user.
  const existing = await secretNames(ctx, t);
  for (const s of existing) say(`✓ ${t.label} secret ${s} already set (kept)`);
  const values: Record<string, string> = {};
  const from: Record<string, string> = {};
  if (needsNewShimSecret(existing.includes("SHIM_SECRET"), provider !== undefined || !api)) {
    if (existing.includes("SHIM_SECRET"))
      say(`! provider "${name}" is not registered: the shim gets a new SHIM_SECRET to register it with`);
    values.SHIM_SECRET = ctx.generate("token");
    from.SHIM_SECRET = "generated";
  }
  const cloud = await cloudSecrets(kind, existing, ctx.io, opts.dryRun);
  Object.assign(values, cloud.values);
  Object.assign(from, cloud.from);
  await putSecrets(ctx, t, values, from);

  // Deploy, then register (or update) the provider with the shim's URL and the new secret.
  say(opts.dryRun ? `· would deploy the ${t.label}` : `→ deploying the ${t.label} (wrangler deploy)`);
  const deployed = await change(ctx, ["deploy", "-c", deployConfig(t)], { outputFile: true });
  let url: string | undefined;
  if (deployed) {
    url = workersDevUrl(deployTargets(deployed.outputFile ?? ""));
    if (!url)
      throw new StepFailure(
        `the ${t.label} deploy reported no workers.dev URL`,
        deployed.stdout,
        "register it yourself: edgerunner provider create (docs/cli.md)",
      );
    say(`✓ ${t.label} deployed at ${url}`);
  }
  if (opts.dryRun || !api || !url) {
    say(`· would register provider "${name}" on the coordinator with the shim's URL and SHIM_SECRET`);
  } else {
    let plan = planProvider(provider, url, values.SHIM_SECRET);
    if (plan.kind === "move") {
      say(`! provider "${name}" is at ${provider!.url}: it moves to ${url} with a new SHIM_SECRET (a new URL goes with a new secret)`);
      values.SHIM_SECRET = ctx.generate("token");
      await putSecrets(ctx, t, { SHIM_SECRET: values.SHIM_SECRET }, { SHIM_SECRET: "generated" });
      plan = planProvider(provider, url, values.SHIM_SECRET);
    }
    if (plan.kind === "create") {
      await unwrap(api.POST("/api/v1/providers", { body: { name, url, secret: plan.secret } }));
      say(`+ registered provider "${name}" (${url})`);
    } else if (plan.kind === "update") {
      await unwrap(api.PUT("/api/v1/providers/{name}", { params: { path: { name } }, body: plan.body }));
      say(`+ updated provider "${name}" (${Object.keys(plan.body).join(", ")})`);
    } else {
      say(`✓ provider "${name}" already registered (${url})`);
    }
  }
  return { shim: kind.name, url: url ?? null, provider: name, secrets_set: opts.dryRun ? [] : Object.keys(values) };
}

/** One `secret bulk` (values on stdin; under --dry-run shown as where they come from). */
async function putSecrets(ctx: SetupContext, t: WorkerTarget, values: Record<string, string>, from: Record<string, string>) {
  const names = Object.keys(from);
  if (!names.length) return;
  ctx.say(`${ctx.opts.dryRun ? "· would set" : "→ setting"} ${t.label} secrets ${names.join(", ")}`);
  const shown = JSON.stringify(Object.fromEntries(names.map((n) => [n, `<${from[n]}>`])));
  if (await change(ctx, ["secret", "bulk", "-c", deployConfig(t)], { stdin: JSON.stringify(values), shownStdin: shown })) {
    for (const n of names) ctx.say(`+ set ${t.label} secret ${n} (${from[n]})`);
  }
}

type Api = ReturnType<typeof makeClient>;

/** The provider, or undefined when the coordinator has none by that name; waits for a coordinator that does not answer yet. */
async function findProvider(ctx: SetupContext, api: Api, name: string, url: string): Promise<ProviderView | undefined> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await unwrap(api.GET("/api/v1/providers/{name}", { params: { path: { name } } }));
    } catch (e) {
      if (e instanceof ApiFailure && e.status === 404 && e.body.code === "not_found") return undefined;
      // Not up yet: no answer, or not the coordinator's own JSON (a new workers.dev name, a 5xx).
      const notYet = e instanceof NetworkFailure || (e instanceof ApiFailure && (e.status >= 500 || e.body.code === undefined));
      if (!notYet || attempt >= API_ATTEMPTS) throw e;
      ctx.say(`… waiting for ${url} to answer (${attempt}/${API_ATTEMPTS - 1})`);
      await ctx.sleep(API_RETRY_MS);
    }
  }
}
