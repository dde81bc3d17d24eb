/** A strict-enough parser of Prometheus text exposition for tests: families, types and samples. */

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Parsed {
  types: Map<string, string>;
  help: Map<string, string>;
  samples: Sample[];
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/;
const LABEL = /\s*([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"\s*(,|$)/y;

export function parsePrometheus(text: string): Parsed {
  const out: Parsed = { types: new Map(), help: new Map(), samples: [] };
  if (!text.endsWith("\n")) throw new Error("exposition must end with a newline");
  for (const line of text.split("\n")) {
    if (!line) continue;
    if (line.startsWith("# TYPE ")) {
      const [name, type] = line.slice(7).split(" ");
      if (out.types.has(name!)) throw new Error(`TYPE given twice for ${name}`);
      out.types.set(name!, type!);
      continue;
    }
    if (line.startsWith("# HELP ")) {
      const rest = line.slice(7);
      const i = rest.indexOf(" ");
      out.help.set(rest.slice(0, i), rest.slice(i + 1));
      continue;
    }
    if (line.startsWith("#")) continue;
    const m = SAMPLE.exec(line);
    if (!m) throw new Error(`not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    if (m[2]) {
      LABEL.lastIndex = 0;
      while (LABEL.lastIndex < m[2].length) {
        const l = LABEL.exec(m[2]);
        if (!l) throw new Error(`bad labels: ${m[2]}`);
        labels[l[1]!] = l[2]!.replace(/\\n/g, "\n").replace(/\\"/g, '"').replace(/\\\\/g, "\\");
      }
    }
    const v = m[3] === "+Inf" ? Infinity : m[3] === "-Inf" ? -Infinity : Number(m[3]);
    if (Number.isNaN(v) && m[3] !== "NaN") throw new Error(`bad value: ${line}`);
    const family = m[1]!.replace(/_(bucket|sum|count)$/, "");
    if (!out.types.has(m[1]!) && !out.types.has(family)) throw new Error(`sample without TYPE: ${line}`);
    out.samples.push({ name: m[1]!, labels, value: v });
  }
  return out;
}

/** The samples of `name` whose labels include `match`. */
export function find(p: Parsed, name: string, match: Record<string, string> = {}): Sample[] {
  return p.samples.filter((s) => s.name === name && Object.entries(match).every(([k, v]) => s.labels[k] === v));
}

/** The one value of `name` with `match`, or undefined. */
export function value(p: Parsed, name: string, match: Record<string, string> = {}): number | undefined {
  const found = find(p, name, match);
  if (found.length > 1) throw new Error(`${found.length} samples of ${name} match ${JSON.stringify(match)}`);
  return found[0]?.value;
}
