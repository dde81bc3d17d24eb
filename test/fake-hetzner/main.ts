/**
 * Runs the fake Hetzner Cloud API on its own:
 *
 *   npm run fake-hetzner -- [--port 8792]
 *
 * Prints one JSON line with its API base and a project's token, to give a shim as HCLOUD_ENDPOINT
 * and HCLOUD_TOKEN. Stops on SIGINT/SIGTERM.
 */
import { parseArgs } from "node:util";
import { startFakeHetzner } from "./server.ts";

const { values } = parseArgs({ options: { port: { type: "string" } } });
const hetzner = await startFakeHetzner({ port: values.port ? Number(values.port) : 0 });
console.log(JSON.stringify({ event: "fake_hetzner_started", url: hetzner.url, endpoint: `${hetzner.url}/v1`, project: hetzner.project }));
for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, () => void hetzner.stop().then(() => process.exit(0)));
