/**
 * What a shim Worker is given by `setup --shim` (its entry in shim-kinds.ts says which): its
 * vars, from the option, the last setup, the cloud's own environment variable or the committed
 * wrangler.toml, in that order; and the cloud secrets it lacks, from the environment, a file the
 * environment names, or the terminal. A value the shim would refuse stops setup, saying where it
 * came from and never what it is, for secrets.
 */
import { readFileSync } from "node:fs";
import { homedir } from "node:os";
import type { Io } from "../command.ts";
import { UsageError } from "../errors.ts";
import { committedVar } from "./deploy-config.ts";
import { committedConfig, deployConfig, readCommittedConfig, readSettings } from "./deploy-config-file.ts";
import type { ShimKind, ShimSecret, ShimVar } from "./shim-kinds.ts";

/**
 * The value as the shim reads it, or a refusal: of the option itself (`from` undefined), or of a
 * value found elsewhere, saying where and which option gives another.
 */
export function parseShimVar(v: ShimVar, value: string, from?: string): string {
  const parsed = v.parse(value);
  if (parsed !== undefined) return parsed;
  if (!from) throw new UsageError(`--${v.option}: ${v.expected}, not "${value}"`);
  throw new UsageError(`${v.name} ${from}: ${v.expected}, not "${value}"`, `give --${v.option} ${v.arg}`);
}

/** The vars to deploy with; one found nowhere is left to the shim's own default. */
export function shimVars(root: string, kind: ShimKind, given: Record<string, string>, env: NodeJS.ProcessEnv): Record<string, string> {
  const committed = readCommittedConfig(root, kind.target);
  const last = readSettings(root, kind.target)?.vars ?? {};
  const vars: Record<string, string> = {};
  for (const v of kind.vars) {
    const candidates: [string | undefined, string | undefined][] = [
      [given[v.name], undefined],
      [last[v.name], `from the last setup (${deployConfig(kind.target)})`],
      [v.env ? env[v.env] : undefined, `from $${v.env}`],
      [committedVar(committed, v.name), `from ${committedConfig(kind.target)}`],
    ];
    const found = candidates.find(([value]) => value);
    if (found) vars[v.name] = parseShimVar(v, found[0]!, found[1]);
  }
  return vars;
}

export interface CloudSecrets {
  values: Record<string, string>;
  /** Where each value came from, as progress lines say it ("from $HCLOUD_TOKEN"); under --dry-run also the ones that would be asked for. */
  from: Record<string, string>;
}

/** The cloud secrets the shim does not have yet (`existing`: the names it has); existing ones are kept. */
export async function cloudSecrets(kind: ShimKind, existing: string[], io: Io, dryRun: boolean): Promise<CloudSecrets> {
  const out: CloudSecrets = { values: {}, from: {} };
  for (const s of kind.secrets) {
    if (existing.includes(s.name)) continue;
    const found = fromEnvironment(s, io.env, kind) ?? (s.required && !dryRun ? await asked(s, io, kind) : undefined);
    if (found) {
      const problem = s.problem?.(found.value);
      if (problem) throw new UsageError(`${s.name} ${found.from} ${problem}`, kind.credentialsHint);
      out.values[s.name] = found.value;
      out.from[s.name] = found.from;
    } else if (s.required && dryRun) {
      out.from[s.name] = "asked for";
    } else if (s.required) {
      throw new UsageError(`the ${kind.target.label} needs ${s.name}`, kind.credentialsHint);
    }
  }
  return out;
}

interface Found {
  value: string;
  from: string;
}

function fromEnvironment(s: ShimSecret, env: NodeJS.ProcessEnv, kind: ShimKind): Found | undefined {
  for (const source of s.sources) {
    const set = env[source.env];
    if (!set) continue;
    if (!source.file) return { value: set, from: `from $${source.env}` };
    return readSecretFile(set, `from the file ${source.env}=${set}`, kind);
  }
  return undefined;
}

async function asked(s: ShimSecret, io: Io, kind: ShimKind): Promise<Found | undefined> {
  if (!s.prompt) return undefined;
  const answer = (await io.prompt?.(s.prompt.question, { hidden: !s.prompt.file }))?.trim();
  if (!answer) return undefined;
  return s.prompt.file ? readSecretFile(answer, `from the file ${answer}`, kind) : { value: answer, from: "typed in" };
}

function readSecretFile(path: string, from: string, kind: ShimKind): Found {
  // A path typed at a prompt is not expanded by a shell.
  const full = path.startsWith("~/") ? homedir() + path.slice(1) : path;
  try {
    return { value: readFileSync(full, "utf8"), from };
  } catch (e) {
    const why = (e as NodeJS.ErrnoException).code === "ENOENT" ? "no such file" : (e as Error).message;
    throw new UsageError(`cannot read ${path}: ${why}`, kind.credentialsHint);
  }
}
