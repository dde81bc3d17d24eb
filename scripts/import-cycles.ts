/**
 * `npm run imports`: the import picture of src/ — every circle of files that import each other
 * (type-only imports count: a circle of types still ties the files' meaning together), with the
 * folders it spans. A circle inside one folder is one unit split into files; a circle across
 * folders means a dependency points outward (docs/data-access.md), and
 * test/unit/import-cycles.test.ts fails on it. `--files` lists the files of every circle.
 */
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import ts from "typescript";

export interface ImportGraph {
  /** Files named from the folder above src/, e.g. `src/env.ts`, sorted. */
  files: string[];
  /** Each file's imports of other files of the graph, without repeats. */
  imports: Map<string, string[]>;
}

export interface Cycle {
  /** Sorted. */
  files: string[];
  /** The folders the files are in, named from src/ (`.` for src/ itself), sorted. */
  folders: string[];
  /** Imports inside the circle from one folder to another: where a cross-folder circle is broken. */
  crossing: [from: string, to: string][];
}

export interface ImportPicture {
  files: number;
  edges: number;
  /** Largest first. */
  cycles: Cycle[];
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(path);
    return /\.tsx?$/.test(e.name) && !e.name.endsWith(".d.ts") ? [path] : [];
  });
}

/** The file a relative specifier names, the way the bundler finds it; null for anything not a source file of the graph. */
function resolveSpecifier(from: string, specifier: string, known: Set<string>): string | null {
  const base = resolve(dirname(from), specifier);
  for (const candidate of [base, `${base}.ts`, `${base}.tsx`, join(base, "index.ts"), join(base, "index.tsx")]) {
    if (known.has(candidate)) return candidate;
  }
  return null;
}

/**
 * Every static import and re-export (`import type` too), every `import()` and `typeof import()`
 * of the .ts/.tsx files under `dir`. TypeScript's own pre-processing scanner reads them (already a
 * dependency), so that specifiers in comments, strings and regular expressions are not taken for imports.
 */
export function importGraph(dir = resolve(import.meta.dirname, "../src")): ImportGraph {
  const root = dirname(dir);
  const paths = sourceFiles(dir).sort();
  const known = new Set(paths);
  const imports = new Map<string, string[]>();
  for (const path of paths) {
    const found = ts.preProcessFile(readFileSync(path, "utf8"), true, true).importedFiles;
    const targets = found.filter((f) => f.fileName.startsWith(".")).map((f) => resolveSpecifier(path, f.fileName, known));
    const unique = [...new Set(targets.filter((t): t is string => t !== null))];
    imports.set(relative(root, path), unique.map((t) => relative(root, t)).sort());
  }
  return { files: paths.map((p) => relative(root, p)), imports };
}

/** Tarjan's strongly connected components, iteratively (a long import chain must not exhaust the stack). */
export function stronglyConnected(graph: ImportGraph): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const components: string[][] = [];
  let next = 0;
  for (const start of graph.files) {
    if (index.has(start)) continue;
    const work: { node: string; edge: number }[] = [{ node: start, edge: 0 }];
    index.set(start, next);
    low.set(start, next++);
    stack.push(start);
    onStack.add(start);
    while (work.length > 0) {
      const frame = work[work.length - 1]!;
      const targets = graph.imports.get(frame.node) ?? [];
      if (frame.edge < targets.length) {
        const target = targets[frame.edge++]!;
        if (!index.has(target)) {
          index.set(target, next);
          low.set(target, next++);
          stack.push(target);
          onStack.add(target);
          work.push({ node: target, edge: 0 });
        } else if (onStack.has(target)) {
          low.set(frame.node, Math.min(low.get(frame.node)!, index.get(target)!));
        }
        continue;
      }
      work.pop();
      const parent = work[work.length - 1];
      if (parent) low.set(parent.node, Math.min(low.get(parent.node)!, low.get(frame.node)!));
      if (low.get(frame.node) === index.get(frame.node)) {
        const component: string[] = [];
        let member: string;
        do {
          member = stack.pop()!;
          onStack.delete(member);
          component.push(member);
        } while (member !== frame.node);
        components.push(component.sort());
      }
    }
  }
  return components;
}

const folderOf = (file: string) => file.split("/").slice(1, -1).join("/") || ".";

/** The graph's circles: components of more than one file, or a file importing itself. */
export function importPicture(graph = importGraph()): ImportPicture {
  const cycles = stronglyConnected(graph)
    .filter((c) => c.length > 1 || graph.imports.get(c[0]!)?.includes(c[0]!))
    .map((files): Cycle => {
      const members = new Set(files);
      const crossing = files.flatMap((from) =>
        (graph.imports.get(from) ?? [])
          .filter((to) => members.has(to) && folderOf(to) !== folderOf(from))
          .map((to): [string, string] => [from, to]),
      );
      return { files, folders: [...new Set(files.map(folderOf))].sort(), crossing };
    })
    .sort((a, b) => b.files.length - a.files.length || a.files[0]!.localeCompare(b.files[0]!));
  let edges = 0;
  for (const targets of graph.imports.values()) edges += targets.length;
  return { files: graph.files.length, edges, cycles };
}

export const crossesFolders = (cycle: Cycle) => cycle.folders.length > 1;

const counted = (n: number, noun: string) => `${n} ${noun}${n === 1 ? "" : "s"}`;

/**
 * One cycle as the command prints it: a cross-folder one with its files, each with the imports
 * it makes across folders inside the circle, which are where such a circle is broken.
 */
export function describeCycle(cycle: Cycle, withFiles = crossesFolders(cycle)): string {
  const head = `cycle of ${counted(cycle.files.length, "file")} in ${counted(cycle.folders.length, "folder")}: ${cycle.folders.join(", ")}`;
  if (!withFiles) return head;
  const lines = cycle.files.map((file) => {
    const across = cycle.crossing.filter(([from]) => from === file).map(([, to]) => to);
    return across.length > 0 ? `    ${file} → ${across.join(", ")}` : `    ${file}`;
  });
  return [head, ...lines].join("\n");
}

export function describePicture(picture: ImportPicture, allFiles = false): string {
  const largest = picture.cycles[0]?.files.length ?? 0;
  const crossing = picture.cycles.filter(crossesFolders).length;
  const summary =
    `${counted(picture.files, "file")}, ${counted(picture.edges, "import")}, ${counted(picture.cycles.length, "cycle")}, ` +
    `largest cycle ${counted(largest, "file")}, ${counted(crossing, "cycle")} spanning more than one folder`;
  return [...picture.cycles.map((c) => describeCycle(c, allFiles || crossesFolders(c))), summary].join("\n");
}

if (process.argv[1] && import.meta.url === new URL(`file://${process.argv[1]}`).href) {
  process.stdout.write(`${describePicture(importPicture(), process.argv.includes("--files"))}\n`);
}
