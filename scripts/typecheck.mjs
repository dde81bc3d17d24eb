// `npm run typecheck` (and the first step of `npm test`): both TypeScript projects, tsconfig.json
// (the Worker, its tests, the shim Workers) and tsconfig.node.json (what runs in Node), at the same
// time: each tsc keeps one core busy. Each one's report is printed whole once it is done (nothing
// when it finds nothing), so the two never interleave; exits 1 if either found an error.
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const tsc = fileURLToPath(new URL("../node_modules/typescript/bin/tsc", import.meta.url));

const check = (args) =>
  new Promise((done) => {
    const child = spawn(process.execPath, [tsc, "--noEmit", ...args], { cwd: root, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    child.stdout.on("data", (c) => (out += c));
    child.stderr.on("data", (c) => (out += c));
    child.on("close", (code, signal) => done({ code: code ?? 1, out: signal ? `${out}tsc ${args.join(" ")}: ${signal}\n` : out }));
  });

const results = await Promise.all([check([]), check(["-p", "tsconfig.node.json"])]);
for (const { out } of results) process.stdout.write(out);
process.exit(results.some((r) => r.code !== 0) ? 1 : 0);
