/**
 * The GARM bridge on its own:
 *
 *   npm run shim:garm -- --config bridge.json [--port 8789 --provider-executable /path …]
 *
 * Prints one JSON log line per event (the first is `bridge_started` with the URL to register
 * with the coordinator). Stops on SIGINT/SIGTERM after the provider calls under way finish.
 */
import "../ts-resolve.ts";

const { runCli } = await import("./cli.ts");
process.exitCode = await runCli(process.argv.slice(2));
