import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";

/**
 * npm 12 runs a dependency's install script only when package.json's `allowScripts` names it
 * (npm 11.16+ warns on every install meanwhile). Every package the lockfile says has one must be
 * reviewed and named, and nothing unreviewed may be named: a dependency that brings a new install
 * script fails here until someone has read it (CONTRIBUTING.md "Dependencies with install scripts").
 */

const pkg = JSON.parse(readFileSync("package.json", "utf8")) as { allowScripts?: Record<string, boolean> };
const lock = JSON.parse(readFileSync("package-lock.json", "utf8")) as {
  packages: Record<string, { version?: string; hasInstallScript?: boolean }>;
};

/** A lockfile key's package name: what follows its last `node_modules/`. */
const nameOf = (key: string) => key.slice(key.lastIndexOf("node_modules/") + "node_modules/".length);

describe("reviewed install scripts", () => {
  const withScripts = [
    ...new Set(
      Object.entries(lock.packages)
        .filter(([, p]) => p.hasInstallScript)
        .map(([k]) => nameOf(k)),
    ),
  ].sort();

  it("every dependency with an install script is reviewed in allowScripts, and only those", () => {
    expect(Object.keys(pkg.allowScripts ?? {}).sort()).toEqual(withScripts);
  });

  it("each is allowed, and the review in CONTRIBUTING.md names it", () => {
    const contributing = readFileSync("CONTRIBUTING.md", "utf8");
    for (const name of withScripts) {
      expect(pkg.allowScripts?.[name]).toBe(true);
      expect(contributing).toContain(`| \`${name}\``);
    }
  });
});
