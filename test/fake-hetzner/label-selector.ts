/**
 * Hetzner's label selector language, as the fake evaluates it: comma-separated terms `k==v`,
 * `k=v`, `k!=v`, `k`, `!k`, `k in (a,b)`, `k notin (a,b)`; all must hold. Documented at
 * https://docs.hetzner.cloud/reference/cloud#label-selector. Pure.
 */

type Term = (labels: Record<string, string>) => boolean;

/** Splits on commas outside parentheses. */
function terms(selector: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let cur = "";
  for (const ch of selector) {
    if (ch === "(") depth++;
    if (ch === ")") depth--;
    if (ch === "," && depth === 0) {
      out.push(cur.trim());
      cur = "";
    } else cur += ch;
  }
  if (cur.trim()) out.push(cur.trim());
  return out;
}

function term(t: string): Term | null {
  let m = /^([^!=\s]+)\s*(==|=|!=)\s*(\S*)$/.exec(t);
  if (m) {
    const [, k, op, v] = m;
    return op === "!=" ? (l) => l[k!] !== v : (l) => l[k!] === v;
  }
  m = /^(\S+)\s+(in|notin)\s+\(([^)]*)\)$/.exec(t);
  if (m) {
    const [, k, op, list] = m;
    const values = list!.split(",").map((v) => v.trim());
    return op === "in" ? (l) => l[k!] !== undefined && values.includes(l[k!]!) : (l) => !values.includes(l[k!] ?? "\u0000");
  }
  m = /^(!?)([^\s!=(),]+)$/.exec(t);
  if (m) {
    const [, not, k] = m;
    return not ? (l) => !(k! in l) : (l) => k! in l;
  }
  return null;
}

/** A matcher, or null when the selector does not parse (Hetzner answers invalid_input). */
export function parseLabelSelector(selector: string): ((labels: Record<string, string>) => boolean) | null {
  const parsed = terms(selector).map(term);
  if (parsed.some((p) => p === null)) return null;
  return (labels) => parsed.every((p) => p!(labels));
}
