#!/usr/bin/env node
// The `edgerunner` command. From a checkout it runs the TypeScript sources directly (Node 22.18+
// strips the types); a published package runs the JavaScript `npm run cli:build` compiles into
// cli/dist (Node does not strip types under node_modules). See docs/cli.md.
import { existsSync } from "node:fs";

const [major, minor] = process.versions.node.split(".").map(Number);
const built = new URL("../dist/src/main.js", import.meta.url);
if (!existsSync(built) && (major < 22 || (major === 22 && minor < 18))) {
  process.stderr.write(`edgerunner: needs Node 22.18 or newer to run from source (this is ${process.version}); or run \`npm run cli:build\` first\n`);
  process.exit(2);
}
const { main, processIo } = await import(existsSync(built) ? built.href : new URL("../src/main.ts", import.meta.url).href);
process.exitCode = await main(process.argv.slice(2), processIo());
