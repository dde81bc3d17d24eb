/**
 * Runs the fake Compute Engine on its own:
 *
 *   npm run fake-gce -- [--port 8792]
 *
 * Prints one JSON line with its URL, the compute endpoint to give a shim as GCE_ENDPOINT, and a
 * project with its service account key (the shim's GCE_SERVICE_ACCOUNT_KEY; its token_uri points
 * at the fake). Stops on SIGINT/SIGTERM.
 */
import { parseArgs } from "node:util";
import { startFakeGce } from "./server.ts";

const { values } = parseArgs({ options: { port: { type: "string" } } });
const gce = await startFakeGce({ port: values.port ? Number(values.port) : 0 });
console.log(JSON.stringify({ event: "fake_gce_started", url: gce.url, endpoint: `${gce.url}/compute/v1/`, project: gce.project }));
for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, () => void gce.stop().then(() => process.exit(0)));
