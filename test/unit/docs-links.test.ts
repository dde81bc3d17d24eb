import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

// Every relative link in the README, CONTRIBUTING.md and docs/*.md points at a file that exists,
// and every #anchor at a heading that exists, with GitHub's anchor rules; so moving text between
// files cannot leave a dead link behind.

const root = resolve(import.meta.dirname, "../..");

function markdownFiles(): string[] {
  const docs = readdirSync(join(root, "docs"))
    .filter((name) => name.endsWith(".md"))
    .map((name) => join(root, "docs", name));
  return [join(root, "README.md"), join(root, "CONTRIBUTING.md"), ...docs].filter((path) => existsSync(path));
}

/** The text outside fenced code blocks, with inline code blanked (links in code are not links). */
function prose(markdown: string): string[] {
  const lines: string[] = [];
  let fence: string | null = null;
  for (const line of markdown.split("\n")) {
    const marker = /^\s*(`{3,}|~{3,})/.exec(line)?.[1];
    if (marker && (fence === null || marker.startsWith(fence))) {
      fence = fence === null ? marker : null;
      lines.push("");
      continue;
    }
    lines.push(fence === null ? line : "");
  }
  return lines;
}

/** GitHub's slug for a heading (github-slugger): its rendered text lowercased, punctuation dropped, spaces to hyphens. */
function githubSlug(heading: string): string {
  const text = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, "$1") // links and images: their text
    .replace(/<[^>]+>/g, "") // inline HTML
    .replace(/`/g, "")
    .replace(/(\*\*|__|\*)/g, "")
    .trim()
    .toLowerCase();
  return text.replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, "").replace(/ /g, "-");
}

/** The anchors a markdown file has: one per heading, a repeated slug numbered -1, -2, … as GitHub does. */
function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const line of prose(markdown)) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line)?.[1];
    if (heading === undefined) continue;
    const slug = githubSlug(heading);
    const n = seen.get(slug) ?? 0;
    seen.set(slug, n + 1);
    anchors.add(n === 0 ? slug : `${slug}-${n}`);
  }
  for (const [, name] of markdown.matchAll(/<a\s+(?:name|id)="([^"]+)"/g)) anchors.add(name!);
  return anchors;
}

/** Inline links `[text](target)` and reference definitions `[label]: target`, outside code. */
function linksOf(markdown: string): { line: number; target: string }[] {
  const links: { line: number; target: string }[] = [];
  prose(markdown).forEach((raw, i) => {
    const line = raw.replace(/`[^`]*`/g, "``");
    for (const m of line.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) links.push({ line: i + 1, target: m[1]! });
    const ref = /^\s*\[[^\]]+\]:\s*(\S+)/.exec(line);
    if (ref) links.push({ line: i + 1, target: ref[1]! });
  });
  return links;
}

/** What is wrong with one link, or null when it resolves. */
function problem(file: string, target: string): string | null {
  if (/^[a-z][a-z0-9+.-]*:/i.test(target)) return null; // https:, mailto:, …: not ours to check
  const [pathPart = "", anchor] = target.split("#", 2);
  const path = pathPart === "" ? file : resolve(dirname(file), decodeURIComponent(pathPart));
  if (!existsSync(path)) return `no such file ${relative(root, path)}`;
  if (anchor === undefined || anchor === "") return null;
  if (statSync(path).isDirectory() || !path.endsWith(".md")) return `#${anchor} on a file that has no headings`;
  const anchors = anchorsOf(readFileSync(path, "utf8"));
  return anchors.has(decodeURIComponent(anchor).toLowerCase()) ? null : `no heading #${anchor} in ${relative(root, path)}`;
}

describe("GitHub's heading anchors", () => {
  it("lowercases, drops punctuation and code marks, and turns spaces into hyphens", () => {
    expect(githubSlug("Logs: `wrangler tail`")).toBe("logs-wrangler-tail");
    expect(githubSlug("The simulator shim (`shims/simulator/`)")).toBe("the-simulator-shim-shimssimulator");
    expect(githubSlug("Routes (under `/api/v1`; a trailing slash works on every one)")).toBe(
      "routes-under-apiv1-a-trailing-slash-works-on-every-one",
    );
    expect(githubSlug("What a workflow_job delivery does")).toBe("what-a-workflow_job-delivery-does");
    expect(githubSlug("Quick start: see it work")).toBe("quick-start-see-it-work");
    expect(githubSlug("[Linked](x.md) heading — with a dash")).toBe("linked-heading--with-a-dash");
  });

  it("numbers repeated headings and ignores headings inside code blocks", () => {
    const anchors = anchorsOf("# Run it\n\n```sh\n# not a heading\n```\n\n## Run it\n### Run it\n");
    expect([...anchors]).toEqual(["run-it", "run-it-1", "run-it-2"]);
  });

  it("finds links outside code only", () => {
    const links = linksOf("See [a](a.md#x) and `[b](b.md)`.\n\n```\n[c](c.md)\n```\n[ref]: d.md\n");
    expect(links.map((l) => l.target)).toEqual(["a.md#x", "d.md"]);
  });
});

describe("links in the README and docs/", () => {
  const files = markdownFiles();

  it("finds the documents", () => {
    expect(files.map((f) => relative(root, f))).toContain("README.md");
    expect(files.length).toBeGreaterThan(5);
  });

  it.each(files.map((f) => [relative(root, f), f]))("every relative link and #anchor in %s resolves", (_name, file) => {
    const dead = linksOf(readFileSync(file, "utf8"))
      .map(({ line, target }) => ({ line, target, problem: problem(file, target) }))
      .filter((l) => l.problem !== null)
      .map((l) => `line ${l.line}: ${l.target} (${l.problem})`);
    expect(dead).toEqual([]);
  });
});
