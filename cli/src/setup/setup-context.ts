/**
 * What the steps of `edgerunner setup` share: the options, the wrangler runner, the progress
 * printer, and the few moves every step makes (run a read-only wrangler command; run a changing
 * one, or only print it under --dry-run; list a Worker's secrets; write a deploy config).
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { Io } from "../command.ts";
import { StepFailure } from "../errors.ts";
import type { CloudflarePlan } from "./cloudflare-plan.ts";
import type { DeploySettings } from "./deploy-config.ts";
import { committedConfig, deployConfig, renderedDeployConfig, type WorkerTarget, writeDeployConfig } from "./deploy-config-file.ts";
import type { SecretKind } from "./plan.ts";
import type { ShimName } from "./shim-kinds.ts";
import { commandLine, failed, type Wrangler, type WranglerResult } from "./wrangler.ts";
import { isWorkerNotFound, parseSecretList } from "./wrangler-output.ts";

export interface SetupOptions {
  /** The checkout's root: where wrangler.toml and shims/ are. */
  root: string;
  database: string;
  /** --public-url, normalized; otherwise the workers.dev URL the deploy reports. */
  publicUrl?: string;
  accountId?: string;
  /** --plan: the Workers plan's vars (cloudflare-plan.ts); without it, the last setup's stand. */
  plan?: CloudflarePlan;
  dryRun: boolean;
  shim?: ShimName;
  /** The shim's vars given as options (--aws-region, --gce-zones), by var name, already checked. */
  shimVars: Record<string, string>;
  /** The provider's name on the coordinator (default: the shim's name). */
  providerName?: string;
  saveProfile: boolean;
  /** The profile to save the new coordinator's token in (global --profile). */
  profile?: string;
}

export interface SetupContext {
  opts: SetupOptions;
  io: Io;
  wrangler: Wrangler;
  /** One progress line. */
  say: (line: string) => void;
  generate: (kind: SecretKind) => string;
  sleep: (ms: number) => Promise<void>;
}

/** A command that changes nothing (whoami, list): run even under --dry-run; a failure stops setup. */
export async function readOnly(ctx: SetupContext, args: string[]): Promise<WranglerResult> {
  const r = await ctx.wrangler.run(args);
  if (r.code !== 0) throw failed(args, r);
  return r;
}

/**
 * A command that changes something: run it (a failure stops setup with wrangler's words), or
 * under --dry-run only print it, with what goes to its stdin shown as placeholders.
 */
export async function change(
  ctx: SetupContext,
  args: string[],
  opts: { stdin?: string; shownStdin?: string; outputFile?: boolean } = {},
): Promise<WranglerResult | undefined> {
  if (ctx.opts.dryRun) {
    ctx.say(`    would run: ${commandLine(args)}${opts.shownStdin ? `  (stdin: ${opts.shownStdin})` : ""}`);
    return undefined;
  }
  const r = await ctx.wrangler.run(args, {
    ...(opts.stdin !== undefined ? { stdin: opts.stdin } : {}),
    ...(opts.outputFile ? { outputFile: true } : {}),
  });
  if (r.code !== 0) throw failed(args, r);
  return r;
}

/** The config wrangler reads for a Worker: the deploy config once written (a dry run reads the committed one for its checks). */
export const configFor = (ctx: SetupContext, t: WorkerTarget) =>
  existsSync(join(ctx.opts.root, deployConfig(t))) ? deployConfig(t) : committedConfig(t);

/** The names of a Worker's secrets; none when the Worker was never deployed. */
export async function secretNames(ctx: SetupContext, t: WorkerTarget): Promise<string[]> {
  const args = ["secret", "list", "--format", "json", "-c", configFor(ctx, t)];
  const r = await ctx.wrangler.run(args);
  if (r.code !== 0) {
    if (isWorkerNotFound(r.stderr + r.stdout)) return [];
    throw failed(args, r);
  }
  const names = parseSecretList(r.stdout);
  if (!names) throw new StepFailure(`\`${commandLine(args)}\` printed no JSON list`, r.stdout, "run it yourself to see what wrangler says");
  return names;
}

/** Writes the deploy config when it would change (only says so under --dry-run). */
export function writeConfig(ctx: SetupContext, t: WorkerTarget, settings: DeploySettings, what: string): void {
  const path = deployConfig(t);
  const full = join(ctx.opts.root, path);
  const before = existsSync(full) ? readFileSync(full, "utf8") : undefined;
  if (before === renderedDeployConfig(ctx.opts.root, t, settings)) {
    ctx.say(`✓ ${path} is up to date (${what})`);
    return;
  }
  if (ctx.opts.dryRun) {
    ctx.say(`· would write ${path} (${what})`);
    return;
  }
  writeDeployConfig(ctx.opts.root, t, settings);
  ctx.say(`+ wrote ${path} (${what})`);
}
