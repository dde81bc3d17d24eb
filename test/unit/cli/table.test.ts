import { describe, expect, it } from "vitest";
import { cell, renderRecord, renderTable } from "../../../cli/src/table.ts";

describe("renderTable", () => {
  const columns = [
    { header: "NAME", value: (r: { name: string; labels: string[]; n: number | null }) => r.name },
    { header: "LABELS", value: (r: { labels: string[] }) => r.labels },
    { header: "N", value: (r: { n: number | null }) => r.n },
  ];

  it("aligns every column to its widest cell, two spaces apart, without trailing blanks", () => {
    const out = renderTable(columns, [
      { name: "linux-small", labels: ["self-hosted", "linux"], n: 5 },
      { name: "win", labels: [], n: null },
    ]);
    expect(out).toBe(
      ["NAME         LABELS             N", "linux-small  self-hosted,linux  5", "win          -                  -", ""].join("\n"),
    );
  });

  it("prints the header alone for no rows", () => {
    expect(renderTable(columns, [])).toBe("NAME  LABELS  N\n");
  });

  it("counts characters, not UTF-16 units, and keeps a cell on one line", () => {
    const out = renderTable(
      [
        { header: "A", value: (r: string) => r },
        { header: "B", value: () => "x" },
      ],
      ["🚀🚀", "multi\n  line"],
    );
    expect(out.split("\n")).toEqual(["A           B", "🚀🚀          x", "multi line  x", ""]);
  });
});

describe("cell", () => {
  it("shows missing values as '-', lists joined, objects as JSON", () => {
    expect([cell(null), cell(undefined), cell(""), cell([]), cell(["a", "b"]), cell({ a: 1 }), cell(false), cell(0)]).toEqual([
      "-",
      "-",
      "-",
      "-",
      "a,b",
      '{"a":1}',
      "false",
      "0",
    ]);
  });
});

describe("renderRecord", () => {
  it("prints one aligned line per field, nested objects flattened", () => {
    const out = renderRecord({ id: "x", status: { next_wake_at: null, create_backoff: { failures: 2 } }, labels: ["a"] });
    const lines = out.trimEnd().split("\n");
    expect(lines.map((l) => l.split(/: +/))).toEqual([
      ["id", "x"],
      ["status.next_wake_at", "-"],
      ["status.create_backoff.failures", "2"],
      ["labels", "a"],
    ]);
    // Values start in one column: after the longest key, its colon and a space.
    expect(new Set(lines.map((l) => l.search(/\S+$/)))).toEqual(new Set(["status.create_backoff.failures: ".length]));
  });
});
