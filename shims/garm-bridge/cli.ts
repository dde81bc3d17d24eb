import { parseArgs } from "node:util";
import { ConfigError, flagOptions, loadConfig } from "./config.ts";
import { createLogger } from "./log.ts";
import { startGarmBridge } from "./server.ts";

const usage = `usage: npm run shim:garm -- --config bridge.json [flags]
flags override the file: --host --port --base-path --provider-executable --provider-config-file
--interface-version v0.1.0|v0.1.1 --secret-file PATH --controller-id ID --env NAME=VALUE (repeatable)
--pass-env PREFIX (repeatable) --timeout-seconds N --concurrency N --max-queue N --async --callback-url URL
The secret comes from secret_file / --secret-file or the EDGERUNNER_SHIM_SECRET environment variable.`;

/** Parses flags, starts the bridge and resolves once it has stopped; the exit code. */
export async function runCli(argv: string[]): Promise<number> {
  const log = createLogger();
  let values;
  try {
    ({ values } = parseArgs({ args: argv, options: { ...flagOptions, help: { type: "boolean" } }, strict: true }));
  } catch (err) {
    console.error(`${(err as Error).message}\n${usage}`);
    return 2;
  }
  if (values.help) {
    console.log(usage);
    return 0;
  }
  let bridge;
  try {
    const config = loadConfig(values);
    bridge = await startGarmBridge({ config, log });
  } catch (err) {
    log("bridge_start_failed", { error: (err as Error).message });
    return err instanceof ConfigError ? 2 : 1;
  }
  await new Promise<void>((resolve) => {
    const stop = (signal: string) => {
      log("bridge_stopping", { signal });
      void bridge.stop().then(resolve);
    };
    process.once("SIGINT", stop);
    process.once("SIGTERM", stop);
  });
  return 0;
}
