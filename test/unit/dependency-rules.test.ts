import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

// The layout rules of CONTRIBUTING/the architecture doc, checked on every run so they stay true:
// dependencies point inward (routes are adapters: only the app that mounts them imports them,
// and they never import each other; what they share lives in src/http/ or src/api/), and SQL
// lives in src/db/ stores (no `.prepare(` and no drizzle-orm import elsewhere).

const root = resolve(import.meta.dirname, "../..");
const src = join(root, "src");

/**
 * SQL still outside src/db/, each with the reason it may stay for now. An entry is removed when
 * its file moves its statements into a store; a file not listed here may not add any.
 */
const SQL_OUTSIDE_STORES_PENDING: Record<string, string> = {};

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(path);
    return /\.tsx?$/.test(e.name) && !e.name.endsWith(".d.ts") ? [path] : [];
  });
}

/** The files under src/ a file imports (static imports, re-exports and dynamic imports), relative to the repository. */
function localImports(file: string, text: string): string[] {
  const specifiers = [...text.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|^\s*import\s+)["']([^"']+)["']/gm)].map((m) => m[1]!);
  return specifiers.filter((s) => s.startsWith(".")).map((s) => relative(root, resolve(dirname(file), s)));
}

const files = sourceFiles(src).map((path) => {
  const text = readFileSync(path, "utf8");
  return { name: relative(root, path), text, imports: localImports(path, text) };
});

const inRoutes = (name: string) => name.startsWith("src/routes/");

describe("dependency rules", () => {
  it("reads the source tree", () => {
    expect(files.length).toBeGreaterThan(50);
    expect(files.find((f) => f.name === "src/app.ts")?.imports).toContain("src/routes/entities");
  });

  it("no route file imports another route file", () => {
    const offenders = files.filter((f) => inRoutes(f.name)).flatMap((f) => f.imports.filter(inRoutes).map((i) => `${f.name} → ${i}`));
    expect(offenders).toEqual([]);
  });

  it("only the app that mounts the routes imports them", () => {
    const offenders = files
      .filter((f) => !inRoutes(f.name) && f.name !== "src/app.ts")
      .flatMap((f) => f.imports.filter(inRoutes).map((i) => `${f.name} → ${i}`));
    expect(offenders).toEqual([]);
  });

  it("no drizzle query is built outside src/db/", () => {
    const offenders = files.filter((f) => !f.name.startsWith("src/db/") && /from\s*["']drizzle-orm/.test(f.text)).map((f) => f.name);
    expect(offenders).toEqual([]);
  });

  it("no SQL statement is prepared outside src/db/", () => {
    const offenders = files.filter((f) => !f.name.startsWith("src/db/") && f.text.includes(".prepare(")).map((f) => f.name);
    expect(offenders.filter((name) => !(name in SQL_OUTSIDE_STORES_PENDING))).toEqual([]);
    // A pending entry whose file no longer prepares SQL is stale: drop it so the rule tightens.
    expect(Object.keys(SQL_OUTSIDE_STORES_PENDING).filter((name) => !offenders.includes(name))).toEqual([]);
  });
});
