/**
 * Running wrangler: the `wrangler` on PATH (from the checkout's root, `npx edgerunner` puts
 * node_modules/.bin first, so it is the project's own), in the checkout's root, output captured.
 * Secrets go in on stdin only (`secret bulk` reads JSON there), never in argv or a file.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { StepFailure } from "../errors.ts";

export interface WranglerResult {
  code: number;
  stdout: string;
  stderr: string;
  /** What wrangler wrote to WRANGLER_OUTPUT_FILE_PATH (ND-JSON), when asked for. */
  outputFile?: string;
}

export interface Wrangler {
  run(args: string[], opts?: { stdin?: string; outputFile?: boolean }): Promise<WranglerResult>;
}

/** Wrangler run as a child process in `root`, with `env` (CLOUDFLARE_ACCOUNT_ID when one was chosen). */
export function spawnWrangler(root: string, env: NodeJS.ProcessEnv): Wrangler {
  return {
    run: (args, opts = {}) =>
      new Promise((resolve, reject) => {
        const dir = opts.outputFile ? mkdtempSync(join(tmpdir(), "edgerunner-wrangler-")) : undefined;
        const outputPath = dir ? join(dir, "output.ndjson") : undefined;
        const child = spawn("wrangler", args, {
          cwd: root,
          env: { ...env, ...(outputPath ? { WRANGLER_OUTPUT_FILE_PATH: outputPath } : {}) },
          stdio: ["pipe", "pipe", "pipe"],
        });
        const out: Buffer[] = [];
        const err: Buffer[] = [];
        child.stdout.on("data", (c: Buffer) => out.push(c));
        child.stderr.on("data", (c: Buffer) => err.push(c));
        const cleanup = () => dir && rmSync(dir, { recursive: true, force: true });
        child.on("error", (e: NodeJS.ErrnoException) => {
          cleanup();
          reject(
            e.code === "ENOENT"
              ? new StepFailure(
                  "wrangler was not found on PATH",
                  "",
                  "run `npm ci` in the checkout, then `npx edgerunner setup` from its root (npx puts node_modules/.bin on PATH)",
                )
              : e,
          );
        });
        child.on("close", (code) => {
          let outputFile: string | undefined;
          try {
            outputFile = outputPath ? readFileSync(outputPath, "utf8") : undefined;
          } catch {
            outputFile = "";
          }
          cleanup();
          resolve({
            code: code ?? 1,
            stdout: Buffer.concat(out).toString("utf8"),
            stderr: Buffer.concat(err).toString("utf8"),
            ...(outputFile !== undefined ? { outputFile } : {}),
          });
        });
        // No terminal on stdin: wrangler takes its non-interactive answers instead of prompting.
        child.stdin.on("error", () => {});
        child.stdin.end(opts.stdin ?? "");
      }),
  };
}

/** The command line as printed (dry run, failures): `wrangler d1 create edgerunner`. */
export const commandLine = (args: string[]) => ["wrangler", ...args].join(" ");

/** A failed run as a StepFailure with wrangler's own words and what to do next. */
export function failed(
  args: string[],
  r: WranglerResult,
  hint = "fix what wrangler says, then run `npx edgerunner setup` again: it keeps what exists and repairs the rest",
): StepFailure {
  return new StepFailure(
    `\`${commandLine(args)}\` failed (exit ${r.code})`,
    [r.stderr.trim(), r.stdout.trim()].filter(Boolean).join("\n"),
    hint,
  );
}
