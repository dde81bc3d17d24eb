/**
 * `setup --shim aws-ec2`: the EC2 shim Worker (shims/aws-ec2, docs/aws-ec2-shim.md) deployed
 * with its secrets, and registered with the coordinator as a provider signed with the same
 * SHIM_SECRET. SHIM_SECRET is generated; the AWS key comes from the environment or is asked
 * for in the terminal, never echoed. Existing secrets are kept, as for the coordinator.
 */
import { makeClient, unwrap } from "../client.ts";
import { configPath, readConfigFile } from "../config.ts";
import { ApiFailure, NetworkFailure, StepFailure, UsageError } from "../errors.ts";
import { committedVar } from "./deploy-config.ts";
import { AWS_EC2_SHIM, deployConfig, readCommittedConfig, readSettings } from "./deploy-config-file.ts";
import { adminTokenFor, needsNewShimSecret, type ProviderView, planProvider } from "./plan.ts";
import { change, type SetupContext, secretNames, writeConfig } from "./setup-context.ts";
import { deployTargets, workersDevUrl } from "./wrangler-output.ts";

export interface ShimReport {
  url: string | null;
  provider: string;
  secrets_set: string[];
}

/** The AWS key's parts: where each comes from when the shim lacks it. */
const AWS_SECRETS = [
  { name: "AWS_ACCESS_KEY_ID", required: true, question: "AWS access key id for the shim's IAM user: " },
  { name: "AWS_SECRET_ACCESS_KEY", required: true, question: "its secret access key: " },
  { name: "AWS_SESSION_TOKEN", required: false, question: "" },
] as const;

/** How often, and how long apart, the coordinator is asked before setup gives up (a new workers.dev name can take a moment). */
const API_ATTEMPTS = 10;
const API_RETRY_MS = 3000;

export async function setupAwsEc2Shim(
  ctx: SetupContext,
  coordinator: { url: string | undefined; createdAdminToken: string | undefined },
): Promise<ShimReport> {
  const { opts, say } = ctx;
  const t = AWS_EC2_SHIM;
  const config = deployConfig(t);

  // The region: --aws-region, else what the last setup chose, else AWS_REGION, else the committed default.
  const region =
    opts.awsRegion ??
    readSettings(opts.root, t)?.vars.AWS_REGION ??
    ctx.io.env.AWS_REGION ??
    committedVar(readCommittedConfig(opts.root, t), "AWS_REGION") ??
    "us-east-1";
  writeConfig(ctx, t, { vars: { AWS_REGION: region } }, `AWS_REGION ${region}`);

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
  if (api) provider = await findProvider(ctx, api, opts.providerName, coordinator.url!);
  else if (!coordinator.url) say(`· provider "${opts.providerName}" is looked up once the coordinator is deployed`);
  else
    say(`· cannot look up provider "${opts.providerName}" without the admin token (EDGERUNNER_TOKEN or a profile for ${coordinator.url})`);

  // Secrets: SHIM_SECRET new when missing (or when no provider holds it); the AWS key from the user.
  const existing = await secretNames(ctx, t);
  const values: Record<string, string> = {};
  const shown: Record<string, string> = {};
  for (const name of existing) say(`✓ ${t.label} secret ${name} already set (kept)`);
  if (needsNewShimSecret(existing.includes("SHIM_SECRET"), provider !== undefined || !api)) {
    if (existing.includes("SHIM_SECRET"))
      say(`! provider "${opts.providerName}" is not registered: the shim gets a new SHIM_SECRET to register it with`);
    values.SHIM_SECRET = ctx.generate("token");
    shown.SHIM_SECRET = "<generated>";
  }
  for (const s of AWS_SECRETS) {
    if (existing.includes(s.name)) continue;
    const fromEnv = ctx.io.env[s.name];
    if (fromEnv) {
      values[s.name] = fromEnv;
      shown[s.name] = `<$${s.name}>`;
    } else if (s.required && opts.dryRun) {
      shown[s.name] = "<asked for>";
    } else if (s.required) {
      const answer = (await ctx.io.promptSecret?.(s.question))?.trim();
      if (!answer) {
        throw new UsageError(
          `the EC2 shim needs ${s.name}`,
          "set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (an IAM user's key with the policy in docs/aws-ec2-shim.md), or run setup in a terminal to be asked",
        );
      }
      values[s.name] = answer;
    }
  }
  const names = Object.keys(opts.dryRun ? shown : values);
  if (names.length) {
    say(`${opts.dryRun ? "· would set" : "→ setting"} ${t.label} secrets ${names.join(", ")}`);
    if (await change(ctx, ["secret", "bulk", "-c", config], { stdin: JSON.stringify(values), shownStdin: JSON.stringify(shown) })) {
      for (const name of names) say(`+ set ${t.label} secret ${name}${name === "SHIM_SECRET" ? " (generated)" : ""}`);
    }
  }

  // Deploy, then register (or update) the provider with the shim's URL and the new secret.
  say(opts.dryRun ? `· would deploy the ${t.label}` : `→ deploying the ${t.label} (wrangler deploy)`);
  const deployed = await change(ctx, ["deploy", "-c", config], { outputFile: true });
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
    say(`· would register provider "${opts.providerName}" on the coordinator with the shim's URL and SHIM_SECRET`);
  } else {
    const plan = planProvider(provider, url, values.SHIM_SECRET);
    const path = { params: { path: { name: opts.providerName } } };
    if (plan.kind === "create") {
      await unwrap(api.POST("/api/v1/providers", { body: { name: opts.providerName, url, secret: plan.secret } }));
      say(`+ registered provider "${opts.providerName}" (${url})`);
    } else if (plan.kind === "update") {
      await unwrap(api.PUT("/api/v1/providers/{name}", { ...path, body: plan.body }));
      say(`+ updated provider "${opts.providerName}" (${Object.keys(plan.body).join(", ")})`);
    } else {
      say(`✓ provider "${opts.providerName}" already registered (${url})`);
    }
  }
  return { url: url ?? null, provider: opts.providerName, secrets_set: opts.dryRun ? [] : Object.keys(values) };
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
