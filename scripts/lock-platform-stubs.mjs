// Makes sure package-lock.json has entries for workerd's macOS and Windows builds (darwin x64,
// darwin arm64, win32 x64) beside every copy of its Linux x64 build, nested copies included.
// npm leaves a platform's entry out when the registry it installs from does not serve that
// build (here, for some workerd versions), and `npm ci` then refuses the lock file. A missing
// entry gets the Linux build's version and its own os/cpu, with no download address or integrity:
// the packages are optional and never installed on Linux, so that is all npm needs. Entries npm
// wrote itself are left alone, so with today's lock (npm wrote all three, integrity included) it
// adds nothing and writes nothing; when it adds, it keeps the packages in key order and prints
// what it added. Run after changing dependencies (`npm run lock:platforms`); .ci/run runs it
// before `npm ci`.
import { readFileSync, writeFileSync } from "node:fs";

const path = new URL("../package-lock.json", import.meta.url);
const lock = JSON.parse(readFileSync(path, "utf8"));
const siblings = [
  ["workerd-darwin-64", "darwin", "x64"],
  ["workerd-darwin-arm64", "darwin", "arm64"],
  ["workerd-windows-64", "win32", "x64"],
];
const added = [];
for (const [key, meta] of Object.entries(lock.packages)) {
  if (!key.endsWith("@cloudflare/workerd-linux-64")) continue;
  const prefix = key.slice(0, -"workerd-linux-64".length);
  for (const [name, os, cpu] of siblings) {
    if (lock.packages[prefix + name]) continue;
    lock.packages[prefix + name] = {
      version: meta.version,
      cpu: [cpu],
      dev: meta.dev ?? false,
      license: "Apache-2.0",
      optional: true,
      os: [os],
      engines: { node: ">=16" },
    };
    added.push(`${prefix + name}@${meta.version}`);
  }
}
if (added.length) {
  const [root, ...rest] = Object.entries(lock.packages);
  lock.packages = Object.fromEntries([root, ...rest.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))]);
  writeFileSync(path, JSON.stringify(lock, null, 2) + "\n");
  console.log(`lock-platform-stubs: added ${added.join(", ")}`);
}
