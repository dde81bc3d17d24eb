import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { crossesFolders, describeCycle, describePicture, importGraph, importPicture } from "../../scripts/import-cycles";

// The analysis `npm run imports` prints, held to the rule that no circle of imports spans more
// than one folder (docs/data-access.md): such a circle means a dependency points outward, and
// once one exists every file on it reaches all the others.

const graph = importGraph();

const made: string[] = [];
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

/** A throwaway src/ tree, so that each way of importing is checked on a file that uses only it. */
function fixture(files: Record<string, string>): string {
  const src = join(mkdtempSync(join(tmpdir(), "import-cycles-")), "src");
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(dirname(join(src, name)), { recursive: true });
    writeFileSync(join(src, name), text);
  }
  made.push(dirname(src));
  return src;
}

describe("import cycles", () => {
  it("reads the source tree, type-only imports included", () => {
    expect(graph.files.length).toBeGreaterThan(50);
    expect(graph.imports.get("src/env.ts")).toContain("src/scaleset/rpc.ts");
  });

  it("counts every kind of import, and nothing in comments or strings", () => {
    const src = fixture({
      "a.ts": [
        'import type { B } from "./b";',
        'export { c } from "./c";',
        'export * from "./d/index";',
        "export async function lazy() {",
        '  return import("./e");',
        "}",
        '// import { f } from "./f";',
        "export const s = \"import g from './g'\";",
      ].join("\n"),
      "b.ts": 'import { x } from "./d";\nexport type B = typeof x;',
      "c.ts": "export const c = 1;",
      "d/index.ts": "export const x = 1;",
      "e.tsx": "export const e = 1;",
      "f.ts": "",
      "g.ts": "",
    });
    const g = importGraph(src);
    expect(g.imports.get("src/a.ts")).toEqual(["src/b.ts", "src/c.ts", "src/d/index.ts", "src/e.tsx"]);
    expect(g.imports.get("src/b.ts")).toEqual(["src/d/index.ts"]);
  });

  it("finds each circle with its folders, and the imports that cross them", () => {
    const src = fixture({
      "env.ts": 'import type { Obj } from "./scaleset/object";',
      "scaleset/object.ts": 'import { store } from "../db/store";',
      "db/store.ts": 'import type { Env } from "../env";',
      "bootstrap/a.ts": 'import "./b";',
      "bootstrap/b.ts": 'import "./a";',
      "lib/self.ts": 'import "./self";',
      "lib/leaf.ts": 'import "../env";',
    });
    const picture = importPicture(importGraph(src));
    expect(picture.cycles.map((c) => [c.files, c.folders])).toEqual([
      [
        ["src/db/store.ts", "src/env.ts", "src/scaleset/object.ts"],
        [".", "db", "scaleset"],
      ],
      [["src/bootstrap/a.ts", "src/bootstrap/b.ts"], ["bootstrap"]],
      [["src/lib/self.ts"], ["lib"]],
    ]);
    expect(picture.cycles.filter(crossesFolders)).toHaveLength(1);
    expect(describePicture(picture).split("\n")).toEqual([
      "cycle of 3 files in 3 folders: ., db, scaleset",
      "    src/db/store.ts → src/env.ts",
      "    src/env.ts → src/scaleset/object.ts",
      "    src/scaleset/object.ts → src/db/store.ts",
      "cycle of 2 files in 1 folder: bootstrap",
      "cycle of 1 file in 1 folder: lib",
      "7 files, 7 imports, 3 cycles, largest cycle 3 files, 1 cycle spanning more than one folder",
    ]);
  });

  it("no circle of files spans more than one folder (npm run imports shows them)", () => {
    const crossing = importPicture(graph).cycles.filter(crossesFolders);
    // Each as the command prints it: its files, and the imports across folders where it can be broken.
    expect(crossing.map((c) => describeCycle(c)).join("\n")).toBe("");
  });
});
