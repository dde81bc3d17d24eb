/**
 * Runs the fake Gitea standalone (e2e G, the demo, manual poking):
 *   node test/fake-gitea/main.ts [--port 9200]
 * Prints one JSON line with its URL, then serves until interrupted. The default world (at the
 * root) delivers webhooks itself: its hooks' URLs must reach the coordinator.
 */
import { startFakeGitea } from "./server.ts";

const i = process.argv.indexOf("--port");
const port = i > 0 ? Number(process.argv[i + 1]) : Number(process.env.FAKE_GITEA_PORT ?? 0);
const fake = await startFakeGitea({ port });
fake.worlds.get("")!.settings.deliver = true;
console.log(JSON.stringify({ event: "fake_gitea_listening", url: fake.url, api_url: `${fake.url}/api/v1` }));
const stop = () => void fake.close().then(() => process.exit(0));
process.on("SIGINT", stop);
process.on("SIGTERM", stop);
