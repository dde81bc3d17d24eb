/**
 * Secrets (tokens, private keys, webhook secrets) never come from argv, which other users of the
 * machine can read (ps, /proc, shell history): each has `--<name>-from-file PATH` and
 * `--<name>-from-stdin`. At most one secret per command can come from stdin.
 */
import { readFileSync } from "node:fs";
import type { Context, OptionSpec, Values } from "./command.ts";
import { UsageError } from "./errors.ts";

export function secretOptions(name: string, what: string): Record<string, OptionSpec> {
  return {
    [`${name}-from-file`]: { type: "string", arg: "PATH", description: `read ${what} from a file` },
    [`${name}-from-stdin`]: { type: "boolean", description: `read ${what} from stdin` },
  };
}

/** Checks that at most one of the command's secrets reads stdin (before anything is read). */
export function checkOneStdinSecret(values: Values, names: string[]): void {
  const fromStdin = names.filter((n) => values[`${n}-from-stdin`] === true);
  if (fromStdin.length > 1) {
    throw new UsageError(
      `only one secret can come from stdin (${fromStdin.map((n) => `--${n}-from-stdin`).join(", ")}): use --<name>-from-file for the others`,
    );
  }
}

/** A secret file or stdin's text, without the trailing newline `echo` or an editor adds. */
export async function readSecret(ctx: Context, name: string, opts: { required: boolean }): Promise<string | undefined> {
  const file = ctx.values[`${name}-from-file`];
  const stdin = ctx.values[`${name}-from-stdin`] === true;
  if (typeof file === "string" && stdin) throw new UsageError(`give --${name}-from-file or --${name}-from-stdin, not both`);
  let text: string | undefined;
  if (typeof file === "string") {
    try {
      text = readFileSync(file, "utf8");
    } catch (e) {
      throw new UsageError(`--${name}-from-file: cannot read ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
    }
  } else if (stdin) {
    text = await ctx.io.readStdin();
  }
  if (text === undefined) {
    if (opts.required) throw new UsageError(`--${name}-from-stdin or --${name}-from-file is required`);
    return undefined;
  }
  text = text.replace(/(\r?\n)+$/, "");
  if (!text) throw new UsageError(`${name} is empty`);
  return text;
}
