import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";

/**
 * The worker tests run in the workerd that @cloudflare/vitest-plugin starts through its own
 * miniflare (and wrangler, for the config); `npm run dev`, the e2e runs and deploys run
 * wrangler's. A plugin release pins an older wrangler than ours, so npm would install a second
 * runtime for the tests and they would pass on a workerd that never ships. package.json's
 * `overrides` makes the plugin use ours; this fails when they drift apart again (CONTRIBUTING.md
 * "One Workers runtime").
 */

type LockEntry = { version?: string; dependencies?: Record<string, string> };
const lock = JSON.parse(readFileSync("package-lock.json", "utf8")) as { packages: Record<string, LockEntry> };

/** A lockfile key's package name: what follows its last `node_modules/`. */
const nameOf = (key: string) => key.slice(key.lastIndexOf("node_modules/") + "node_modules/".length);

/** What every copy of each runtime package must be: the top-level wrangler and what it pins. */
function runtimeDrift(packages: Record<string, LockEntry>): string[] {
  const wrangler = packages["node_modules/wrangler"];
  const want: Record<string, string | undefined> = {
    wrangler: wrangler?.version,
    miniflare: wrangler?.dependencies?.miniflare,
    workerd: wrangler?.dependencies?.workerd,
  };
  const drift: string[] = [];
  for (const [key, entry] of Object.entries(packages)) {
    const name = nameOf(key);
    // workerd's binaries come as one optional package per platform, pinned to workerd's version.
    const expected = name.startsWith("@cloudflare/workerd-") ? want.workerd : want[name];
    if (key.startsWith("node_modules/") && expected !== undefined && entry.version !== expected)
      drift.push(`${key} is ${entry.version}, wrangler ${want.wrangler} has ${expected}`);
  }
  return drift;
}

const HOW_TO_FIX = [
  "The tests would run on another workerd than `npm run dev` and deploys.",
  'Set overrides["@cloudflare/vitest-plugin"].miniflare in package.json to the miniflare the',
  "top-level wrangler pins (`npm view wrangler@<version> dependencies`), or move to a",
  "@cloudflare/vitest-plugin release whose dependencies name that wrangler",
  "(`npm view @cloudflare/vitest-plugin@<version> dependencies`). npm keeps a nested copy it",
  "already locked, override or not: delete the package-lock.json entries under",
  "node_modules/@cloudflare/vitest-plugin/node_modules/ named below, then `npm install`,",
  "`npm run lock:platforms`, and `npm ls workerd miniflare wrangler` shows one version of each.",
].join("\n");

describe("one Workers runtime for tests, dev and deploys", () => {
  it("every wrangler, miniflare and workerd in the lockfile is the top-level wrangler's", () => {
    expect(lock.packages["node_modules/wrangler"]?.dependencies?.workerd).toBeDefined();
    expect(runtimeDrift(lock.packages), HOW_TO_FIX).toEqual([]);
  });

  it("finds a second runtime nested under the plugin, as npm installs one without the override", () => {
    const wrangler = { version: "4.164.0", dependencies: { miniflare: "5.20261117.0-beta", workerd: "1.20261117.1" } };
    const one = {
      "": { version: "0.1.0" },
      "node_modules/wrangler": wrangler,
      "node_modules/miniflare": { version: "5.20261117.0-beta" },
      "node_modules/workerd": { version: "1.20261117.1" },
      "node_modules/@cloudflare/workerd-linux-64": { version: "1.20261117.1" },
    };
    expect(runtimeDrift(one)).toEqual([]);
    const two = {
      ...one,
      "node_modules/@cloudflare/vitest-plugin/node_modules/wrangler": { version: "4.156.2" },
      "node_modules/@cloudflare/vitest-plugin/node_modules/miniflare": { version: "5.20261102.0-beta" },
      "node_modules/@cloudflare/vitest-plugin/node_modules/workerd": { version: "1.20261102.1" },
      "node_modules/@cloudflare/vitest-plugin/node_modules/@cloudflare/workerd-linux-64": { version: "1.20261102.1" },
    };
    expect(runtimeDrift(two).map((d) => d.split(" ")[0])).toEqual(Object.keys(two).slice(Object.keys(one).length));
  });
});
