/**
 * Runs the fake GitHub standalone (e2e scripts, manual poking):
 *   node test/fake-github/main.ts [--port 9100]
 * Prints one JSON line with the URL, then serves until interrupted.
 */
import { startFakeGithub } from "./server.ts";

const i = process.argv.indexOf("--port");
const port = i > 0 ? Number(process.argv[i + 1]) : Number(process.env.FAKE_GITHUB_PORT ?? 0);
const fake = await startFakeGithub({ port });
console.log(JSON.stringify({ event: "fake_github_listening", url: fake.url, ghes_url: `${fake.url}/api/v3` }));
const stop = () => void fake.close().then(() => process.exit(0));
process.on("SIGINT", stop);
process.on("SIGTERM", stop);
