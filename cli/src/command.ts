/**
 * What a command is: its words (`scaleset create`), its options (Node's util.parseArgs shapes
 * plus a description), its positional arguments and what it does. Commands return data; main.ts
 * prints it as JSON (--json) or through the command's own rendering for people.
 */
import type { ApiClient } from "./client.ts";
import { UsageError } from "./errors.ts";

export interface OptionSpec {
  type: "string" | "boolean";
  short?: string;
  multiple?: boolean;
  /** Shown after the option in help, e.g. `NAME`. */
  arg?: string;
  description: string;
}

export type Values = Record<string, string | boolean | string[] | undefined>;

export interface Io {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  /** All of stdin (read once, only when a command asks for it). */
  readStdin: () => Promise<string>;
  env: NodeJS.ProcessEnv;
  fetch?: typeof fetch;
  /** Asks in a terminal (a secret without echoing it); undefined when nobody can answer: no terminal, CI, or absent as in tests. */
  prompt?: (question: string, opts: { hidden: boolean }) => Promise<string | undefined>;
}

export interface Context {
  /** The API client, built on first use (so `login` and `help` need no configuration). */
  api: () => ApiClient;
  io: Io;
  values: Values;
  positionals: string[];
  /** Global --profile/--url, for `login`. */
  global: { url?: string; profile?: string };
}

/** What a command hands back: the data for --json, how people see it (or a message), and the exit code when not 0. */
export interface Output {
  data?: unknown;
  text?: string;
  /** A command that ran but found something wrong (`doctor`): see EXIT in errors.ts. */
  exit?: number;
}

export interface Command {
  words: string[];
  summary: string;
  /** Positional arguments, in order (`<name>`); `[x]` marks an optional one. */
  args?: string[];
  options?: Record<string, OptionSpec>;
  example?: string;
  run: (ctx: Context) => Promise<Output>;
}

export const str = (values: Values, name: string): string | undefined => {
  const v = values[name];
  return typeof v === "string" ? v : undefined;
};

export const requireStr = (values: Values, name: string): string => {
  const v = str(values, name);
  if (v === undefined || v === "") throw new UsageError(`--${name} is required`);
  return v;
};

export const bool = (values: Values, name: string): boolean | undefined => {
  const v = values[name];
  return typeof v === "boolean" ? v : undefined;
};

/** A whole number from an option (decimal digits only, like the API's own parameters). */
export const int = (values: Values, name: string): number | undefined => {
  const v = str(values, name);
  if (v === undefined) return undefined;
  if (!/^\d{1,15}$/.test(v)) throw new UsageError(`--${name}: a whole number, not "${v}"`);
  return Number(v);
};

/** A comma-separated list (repeatable too: `--labels a,b --labels c`). */
export const list = (values: Values, name: string): string[] | undefined => {
  const v = values[name];
  if (v === undefined || typeof v === "boolean") return undefined;
  return (Array.isArray(v) ? v : [v])
    .flatMap((s) => s.split(","))
    .map((s) => s.trim())
    .filter(Boolean);
};

/** A JSON object from an option. */
export const jsonObject = (values: Values, name: string): Record<string, unknown> | undefined => {
  const v = str(values, name);
  if (v === undefined) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(v);
  } catch {
    throw new UsageError(`--${name}: not valid JSON`);
  }
  if (!parsed || typeof parsed !== "object" || Array.isArray(parsed)) throw new UsageError(`--${name}: a JSON object`);
  return parsed as Record<string, unknown>;
};

/** The object without its undefined fields (so an update sends only what was given). */
export function defined<T extends Record<string, unknown>>(obj: T): Partial<T> {
  return Object.fromEntries(Object.entries(obj).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/** An update with nothing to change is a usage error, not an empty request. */
export function nonEmpty<T extends Record<string, unknown>>(obj: T, what: string): T {
  if (Object.keys(obj).length === 0) throw new UsageError(`nothing to change: give at least one option for ${what}`);
  return obj;
}

/** For a required option that is read with a converter (`int(...) ?? missing("max-runners")`). */
export const missing = (name: string): never => {
  throw new UsageError(`--${name} is required`);
};

export const deleted = (what: string): Output => ({ text: `deleted ${what}\n` });
