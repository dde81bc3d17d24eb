#!/usr/bin/env node
// The `edgerunner` command. In a checkout it runs the TypeScript sources (Node 22.18+ strips the
// types itself); the published package has no sources, only the JavaScript that
// `npm run cli:build` compiles into cli/dist (Node never strips types under node_modules).
// See docs/cli.md.
import { existsSync } from "node:fs";

const source = new URL("../src/main.ts", import.meta.url);
const built = new URL("../dist/main.js", import.meta.url);
const [major, minor] = process.versions.node.split(".").map(Number);
const stripsTypes = major > 22 || (major === 22 && minor >= 18);

let entry;
if (existsSync(source) && stripsTypes) entry = source;
else if (existsSync(built)) entry = built;
else {
  process.stderr.write(
    `edgerunner: running from source needs Node 22.18 or newer (this is ${process.version}); or run \`npm run cli:build\` first\n`,
  );
  process.exit(2);
}
const { main, processIo } = await import(entry.href);
process.exitCode = await main(process.argv.slice(2), processIo());
