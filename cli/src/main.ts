/**
 * The `edgerunner` command: parse, resolve the configuration (only for commands that call the
 * API), run, print (a table or --json), and map failures to exit codes (errors.ts).
 */
import { readFileSync } from "node:fs";
import { helpText, parseCommandLine } from "./args.ts";
import { type ApiClient, makeClient } from "./client.ts";
import type { Context, Io } from "./command.ts";
import { COMMANDS } from "./commands/index.ts";
import { configPath, readConfigFile, resolveConfig } from "./config.ts";
import { ApiFailure, describeFailure, EXIT } from "./errors.ts";
import { promptInTerminal } from "./setup/prompt.ts";

export function version(): string {
  const pkg = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { version: string };
  return pkg.version;
}

export async function main(argv: string[], io: Io): Promise<number> {
  try {
    const parsed = parseCommandLine(argv, COMMANDS);
    if (parsed.kind === "version") {
      io.stdout(`edgerunner ${version()}\n`);
      return EXIT.ok;
    }
    if (parsed.kind === "help") {
      (parsed.asked ? io.stdout : io.stderr)(helpText(parsed));
      return parsed.asked ? EXIT.ok : EXIT.usage;
    }
    const { command, values, positionals } = parsed;
    const global = {
      ...(typeof values.url === "string" ? { url: values.url } : {}),
      ...(typeof values.profile === "string" ? { profile: values.profile } : {}),
    };
    let client: ApiClient | undefined;
    const ctx: Context = {
      io,
      values,
      positionals,
      global,
      api: () => {
        if (!client) {
          const path = configPath(io.env);
          const config = resolveConfig(global, io.env, readConfigFile(path), path);
          client = makeClient(config.url, config.token, io.fetch, config.access);
        }
        return client;
      },
    };
    const out = await command.run(ctx);
    if (values.json === true) {
      if (out.data !== undefined) io.stdout(JSON.stringify(out.data, null, 2) + "\n");
    } else if (out.text) {
      io.stdout(out.text);
    }
    return out.exit ?? EXIT.ok;
  } catch (err) {
    const { lines, exit } = describeFailure(err);
    // With --json a script gets the API's error body itself (and the status) on stderr.
    if (err instanceof ApiFailure && argv.includes("--json")) io.stderr(JSON.stringify({ status: err.status, ...err.body }) + "\n");
    else io.stderr(lines.join("\n") + "\n");
    return exit;
  }
}

/** The real process's streams and environment. */
export function processIo(): Io {
  // `edgerunner job list | head`: the reader left; stop quietly rather than with a stack trace.
  process.stdout.on("error", (e: NodeJS.ErrnoException) => {
    if (e.code === "EPIPE") process.exit(0);
    throw e;
  });
  return {
    stdout: (text) => void process.stdout.write(text),
    stderr: (text) => void process.stderr.write(text),
    env: process.env,
    prompt: promptInTerminal,
    readStdin: async () => {
      if (process.stdin.isTTY) process.stderr.write("reading from stdin (end with Ctrl-D)\n");
      const chunks: Buffer[] = [];
      for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
      return Buffer.concat(chunks).toString("utf8");
    },
  };
}
