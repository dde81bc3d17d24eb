/**
 * Runs the fake Forgejo standalone (e2e scripts, the simulator, manual poking):
 *   node --experimental-strip-types test/fake-forgejo/main.ts [--port 9200]
 * Prints one JSON line with its URL and the default world's API URL, then serves until interrupted.
 */
import { startFakeForgejo } from "./server.ts";

const i = process.argv.indexOf("--port");
const port = i > 0 ? Number(process.argv[i + 1]) : Number(process.env.FAKE_FORGEJO_PORT ?? 0);
const fake = await startFakeForgejo({ port });
console.log(JSON.stringify({ event: "fake_forgejo_listening", url: fake.url, api_url: `${fake.url}/api/v1` }));
const stop = () => void fake.close().then(() => process.exit(0));
process.on("SIGINT", stop);
process.on("SIGTERM", stop);
