/**
 * Prometheus text exposition (format 0.0.4): families with HELP and TYPE, label values escaped.
 * Pure; the metrics route fills it from D1.
 */

export type MetricType = "counter" | "gauge" | "histogram";
export type Labels = Record<string, string>;

interface Family {
  name: string;
  help: string;
  type: MetricType;
  samples: { suffix: string; labels: Labels; value: number }[];
}

const escapeLabel = (v: string) => v.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n");
const escapeHelp = (v: string) => v.replace(/\\/g, "\\\\").replace(/\n/g, "\\n");

function formatValue(v: number): string {
  if (Number.isNaN(v)) return "NaN";
  if (v === Infinity) return "+Inf";
  if (v === -Infinity) return "-Inf";
  return String(v);
}

function formatLabels(labels: Labels): string {
  const parts = Object.entries(labels).map(([k, v]) => `${k}="${escapeLabel(v)}"`);
  return parts.length ? `{${parts.join(",")}}` : "";
}

export class Exposition {
  private readonly families = new Map<string, Family>();

  private family(name: string, help: string, type: MetricType): Family {
    let f = this.families.get(name);
    if (!f) {
      f = { name, help, type, samples: [] };
      this.families.set(name, f);
    }
    return f;
  }

  /** Declares a family so it is listed (with HELP and TYPE) even when it has no samples yet. */
  declare(name: string, help: string, type: MetricType): this {
    this.family(name, help, type);
    return this;
  }

  add(name: string, help: string, type: "counter" | "gauge", labels: Labels, value: number): this {
    this.family(name, help, type).samples.push({ suffix: "", labels, value });
    return this;
  }

  /** A histogram from cumulative bucket counts (by upper bound), their sum and count. */
  histogram(name: string, help: string, labels: Labels, buckets: { le: number; count: number }[], sum: number, count: number): this {
    const f = this.family(name, help, "histogram");
    for (const b of buckets) f.samples.push({ suffix: "_bucket", labels: { ...labels, le: formatValue(b.le) }, value: b.count });
    f.samples.push({ suffix: "_bucket", labels: { ...labels, le: "+Inf" }, value: count });
    f.samples.push({ suffix: "_sum", labels, value: sum });
    f.samples.push({ suffix: "_count", labels, value: count });
    return this;
  }

  render(): string {
    const out: string[] = [];
    for (const f of this.families.values()) {
      out.push(`# HELP ${f.name} ${escapeHelp(f.help)}`, `# TYPE ${f.name} ${f.type}`);
      for (const s of f.samples) out.push(`${f.name}${s.suffix}${formatLabels(s.labels)} ${formatValue(s.value)}`);
    }
    return out.join("\n") + "\n";
  }
}
