/**
 * The command line: which command the leading words name (aliases allowed: `repos ls`), then its
 * options and positionals through Node's util.parseArgs (strict: an unknown option is an error).
 * Global options (--url, --profile, --json, --help) go anywhere. Pure: argv in, a result out.
 */
import { parseArgs } from "node:util";
import type { Command, OptionSpec, Values } from "./command.ts";
import { UsageError } from "./errors.ts";

export const GLOBAL_OPTIONS: Record<string, OptionSpec> = {
  url: { type: "string", arg: "URL", description: "the coordinator (overrides EDGERUNNER_URL and the profile)" },
  profile: { type: "string", arg: "NAME", description: "the profile to use (default: EDGERUNNER_PROFILE, then the file's current one)" },
  json: { type: "boolean", description: "print the API's JSON instead of a table" },
  help: { type: "boolean", short: "h", description: "show help" },
  version: { type: "boolean", description: "print the version" },
};

/** Other spellings of command words (plural nouns, garm-cli's names, short verbs). */
export const ALIASES: Record<string, string> = {
  endpoints: "endpoint",
  credentials: "credential",
  creds: "credential",
  repos: "repo",
  repository: "repo",
  repositories: "repo",
  orgs: "org",
  organization: "org",
  organizations: "org",
  enterprises: "enterprise",
  providers: "provider",
  scalesets: "scaleset",
  "scale-set": "scaleset",
  pool: "scaleset",
  pools: "scaleset",
  instances: "instance",
  runner: "instance",
  runners: "instance",
  jobs: "job",
  ls: "list",
  get: "show",
  rm: "delete",
  add: "create",
  profiles: "profile",
  tokens: "token",
};

export type Parsed =
  | { kind: "run"; command: Command; values: Values; positionals: string[] }
  /** Help for everything (prefix []) or for the commands under a prefix (`scaleset`). */
  | { kind: "help"; prefix: string[]; commands: Command[]; asked: boolean }
  | { kind: "version" };

const globalTakesValue = (token: string) => {
  const name = token.replace(/^--?/, "");
  return token.startsWith("--") && !token.includes("=") && GLOBAL_OPTIONS[name]?.type === "string";
};

export function parseCommandLine(argv: string[], commands: Command[]): Parsed {
  // The command words: the first bare words, skipping global options (and their values) before them.
  const wordIndexes: number[] = [];
  for (let i = 0; i < argv.length; i++) {
    const token = argv[i]!;
    if (token === "--") break;
    if (token.startsWith("-")) {
      if (wordIndexes.length > 0) break;
      if (globalTakesValue(token)) i++;
      continue;
    }
    // Words continue while they still lead to a command.
    const words = [...wordIndexes.map((w) => ALIASES[argv[w]!] ?? argv[w]!), ALIASES[token] ?? token];
    if (!commands.some((c) => words.every((w, k) => c.words[k] === w))) break;
    wordIndexes.push(i);
    if (commands.some((c) => c.words.length === words.length && c.words.every((w, k) => w === words[k]))) break;
  }
  const words = wordIndexes.map((i) => ALIASES[argv[i]!] ?? argv[i]!);
  const rest = argv.filter((_, i) => !wordIndexes.includes(i));
  const command = commands.find((c) => c.words.length === words.length && c.words.every((w, k) => w === words[k]));
  const asked = rest.includes("--help") || rest.includes("-h");

  if (!command) {
    if (rest.includes("--version") && words.length === 0) return { kind: "version" };
    const under = commands.filter((c) => words.every((w, k) => c.words[k] === w));
    const firstBare = rest.find((t) => !t.startsWith("-"));
    if (!asked && firstBare !== undefined && words.length === 0) {
      throw new UsageError(`unknown command "${firstBare}"`, "run `edgerunner --help` for the commands");
    }
    if (!asked && firstBare !== undefined) {
      throw new UsageError(
        `unknown command "${[...words, firstBare].join(" ")}"`,
        `run \`edgerunner ${words.join(" ")} --help\` for its commands`,
      );
    }
    return { kind: "help", prefix: words, commands: under, asked };
  }
  if (asked) return { kind: "help", prefix: words, commands: [command], asked };

  const options = { ...GLOBAL_OPTIONS, ...(command.options ?? {}) };
  let parsed;
  try {
    parsed = parseArgs({
      args: rest,
      options: Object.fromEntries(
        Object.entries(options).map(([name, o]) => [
          name,
          { type: o.type, ...(o.short ? { short: o.short } : {}), ...(o.multiple ? { multiple: true } : {}) },
        ]),
      ),
      allowPositionals: true,
      allowNegative: true,
      strict: true,
    });
  } catch (e) {
    const message = (e as Error).message.split(". ")[0]!.replace(/\.$/, "");
    const unknown = /Unknown option '--([^']+)'/.exec((e as Error).message)?.[1];
    const hint =
      unknown && options[`${unknown}-from-stdin`]
        ? `secrets are never taken from the command line: use --${unknown}-from-stdin or --${unknown}-from-file`
        : `run \`edgerunner ${command.words.join(" ")} --help\` for its options`;
    throw new UsageError(message, hint);
  }
  const args = command.args ?? [];
  const required = args.filter((a) => a.startsWith("<")).length;
  if (parsed.positionals.length < required) {
    throw new UsageError(
      `missing ${args
        .slice(parsed.positionals.length)
        .filter((a) => a.startsWith("<"))
        .join(" ")}`,
      `usage: ${usageLine(command)}`,
    );
  }
  if (parsed.positionals.length > args.length) {
    throw new UsageError(`unexpected argument "${parsed.positionals[args.length]}"`, `usage: ${usageLine(command)}`);
  }
  return { kind: "run", command, values: parsed.values as Values, positionals: parsed.positionals };
}

export const usageLine = (c: Command) =>
  ["edgerunner", ...c.words, ...(c.args ?? []), ...(c.options && Object.keys(c.options).length ? ["[options]"] : [])].join(" ");

const optionLines = (options: Record<string, OptionSpec>) => {
  const left = Object.entries(options).map(([name, o]) => `${o.short ? `-${o.short}, ` : "    "}--${name}${o.arg ? ` ${o.arg}` : ""}`);
  const width = Math.max(...left.map((l) => l.length));
  return Object.values(options).map((o, i) => `  ${left[i]!.padEnd(width)}  ${o.description}`);
};

/** Help text: one command in full, or a list of commands with their summaries. */
export function helpText(parsed: Extract<Parsed, { kind: "help" }>): string {
  const global = ["Global options:", ...optionLines(GLOBAL_OPTIONS)];
  if (parsed.commands.length === 1 && parsed.commands[0]!.words.length === parsed.prefix.length) {
    const c = parsed.commands[0]!;
    return [
      `usage: ${usageLine(c)}`,
      "",
      c.summary,
      ...(c.options ? ["", "Options:", ...optionLines(c.options)] : []),
      ...(c.example ? ["", "Example:", `  ${c.example}`] : []),
      "",
      ...global,
      "",
    ].join("\n");
  }
  const rows = parsed.commands.map((c) => [[...c.words, ...(c.args ?? [])].join(" "), c.summary] as const);
  const width = Math.max(...rows.map(([l]) => l.length));
  return [
    `usage: edgerunner ${parsed.prefix.length ? parsed.prefix.join(" ") + " " : ""}<command> [options]`,
    "",
    "Commands:",
    ...rows.map(([l, s]) => `  ${l.padEnd(width)}  ${s}`),
    "",
    ...global,
    "",
    "Configuration: EDGERUNNER_URL and EDGERUNNER_TOKEN, or a profile saved by `edgerunner login` (docs/cli.md).",
    "Exit status: 0 done, 1 the API refused (its error is printed), 2 wrong usage or no configuration, 3 coordinator unreachable.",
    "",
  ].join("\n");
}
