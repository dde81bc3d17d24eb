/**
 * Output for people: aligned columns (a header row, then one row per item) and, for one item,
 * "key: value" lines. Pure: strings in, a string out.
 */

export interface Column<T> {
  header: string;
  value: (row: T) => unknown;
}

/** A cell's text: null/undefined as "-", arrays joined with ",", objects as compact JSON. */
export function cell(v: unknown): string {
  if (v === null || v === undefined || v === "") return "-";
  if (Array.isArray(v)) return v.length ? v.map(cell).join(",") : "-";
  if (typeof v === "object") return JSON.stringify(v);
  return String(v).replace(/\s*\n\s*/g, " ");
}

export function renderTable<T>(columns: Column<T>[], rows: T[]): string {
  const grid = [columns.map((c) => c.header), ...rows.map((r) => columns.map((c) => cell(c.value(r))))];
  const widths = columns.map((_, i) => Math.max(...grid.map((line) => [...line[i]!].length)));
  return (
    grid
      .map((line) =>
        line
          .map((text, i) => (i === line.length - 1 ? text : text + " ".repeat(widths[i]! - [...text].length)))
          .join("  ")
          .trimEnd(),
      )
      .join("\n") + "\n"
  );
}

/** One item, a line per field in the object's own order; nested objects are flattened as `a.b`. */
export function renderRecord(record: Record<string, unknown>): string {
  const entries: [string, unknown][] = [];
  const walk = (prefix: string, obj: Record<string, unknown>) => {
    for (const [k, v] of Object.entries(obj)) {
      const key = prefix ? `${prefix}.${k}` : k;
      if (v && typeof v === "object" && !Array.isArray(v) && Object.keys(v).length > 0) walk(key, v as Record<string, unknown>);
      else entries.push([key, v]);
    }
  };
  walk("", record);
  const width = Math.max(0, ...entries.map(([k]) => k.length));
  return entries.map(([k, v]) => `${(k + ":").padEnd(width + 1)} ${cell(v)}`.trimEnd()).join("\n") + "\n";
}
