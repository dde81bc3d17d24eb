import type { GceInstance } from "./types.ts";

/**
 * The part of Compute Engine's list `filter` syntax the shim uses: parenthesised terms
 * `(field = "value")` / `(field != value)` joined by whitespace or AND (all must hold), where the
 * field is name, id, status, zone or labels.KEY. Anything else is refused as GCE would (400).
 */

export interface Term {
  field: string;
  op: "=" | "!=";
  value: string;
}

const TERM = /^\(\s*([a-zA-Z][a-zA-Z0-9_.-]*)\s*(=|!=)\s*(?:"((?:[^"\\]|\\.)*)"|([^\s()"]+))\s*\)$/;

export function parseFilter(filter: string): Term[] | null {
  const text = filter.trim();
  if (!text) return [];
  const pieces = text.split(/\)\s*(?:AND\s*)?\(/).map((p, i, all) => `${i === 0 ? "" : "("}${p}${i === all.length - 1 ? "" : ")"}`);
  const terms: Term[] = [];
  for (const piece of pieces) {
    const m = TERM.exec(piece.trim());
    if (!m) return null;
    terms.push({ field: m[1]!, op: m[2] as Term["op"], value: m[3] !== undefined ? m[3].replace(/\\(.)/g, "$1") : m[4]! });
  }
  return terms;
}

function fieldValue(i: GceInstance, field: string): string | undefined {
  if (field.startsWith("labels.")) return i.labels?.[field.slice(7)];
  if (field === "zone") return i.zone;
  const v = i[field];
  return typeof v === "string" ? v : undefined;
}

export function matchesFilter(i: GceInstance, terms: Term[]): boolean {
  return terms.every((t) => {
    const v = fieldValue(i, t.field);
    // GCE compares a zone URL by its tail too (zone = us-central1-a).
    const equal = v !== undefined && (v === t.value || (t.field === "zone" && v.endsWith(`/${t.value}`)));
    return t.op === "=" ? equal : !equal;
  });
}
