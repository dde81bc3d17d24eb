import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { HISTOGRAMS } from "../../src/observability/histograms";

// docs/grafana/edgerunner.json, the Grafana dashboard docs/observability.md ships: a dashboard
// Grafana imports (the classic JSON model), whose every query asks for metrics GET /metrics exports.

const root = resolve(import.meta.dirname, "../..");
const dashboard = JSON.parse(readFileSync(join(root, "docs/grafana/edgerunner.json"), "utf8"));
const metricsRoute = readFileSync(join(root, "src/routes/metrics.ts"), "utf8");

/** The metric families the metrics route exports: `${P}name` and `g("name", …)` in its source, and the D1-kept histograms. */
function exportedFamilies(): Set<string> {
  const names = new Set<string>(Object.values(HISTOGRAMS).map((h) => h.name));
  for (const m of metricsRoute.matchAll(/\$\{P\}([a-z_]+)/g)) names.add(`edgerunner_${m[1]}`);
  for (const m of metricsRoute.matchAll(/\bg\(\s*"([a-z_]+)"/g)) names.add(`edgerunner_${m[1]}`);
  return names;
}

/** Families whose series carry `_bucket`, `_sum` and `_count`. */
function histogramFamilies(): Set<string> {
  const names = new Set<string>(Object.values(HISTOGRAMS).map((h) => h.name));
  for (const m of metricsRoute.matchAll(/const (\w+) = `\$\{P\}([a-z_]+)`;/g)) {
    if (new RegExp(`m\\.histogram\\(${m[1]},`).test(metricsRoute)) names.add(`edgerunner_${m[2]}`);
  }
  return names;
}

interface Panel {
  id: number;
  type: string;
  title: string;
  gridPos: { h: number; w: number; x: number; y: number };
  datasource?: { type: string; uid: string };
  targets?: { refId: string; expr: string; datasource: { uid: string } }[];
}

const panels = dashboard.panels as Panel[];
/** How a panel names the data source chosen on import: the `datasource` variable. */
const CHOSEN = ["$", "{datasource}"].join("");
const queries = panels.flatMap((p) => (p.targets ?? []).map((t) => ({ panel: p.title, expr: t.expr })));

describe("the Grafana dashboard", () => {
  it("is a dashboard Grafana imports: title, uid, schema version, time range, panels laid out on the 24-column grid", () => {
    expect(dashboard.title).toBe("Edgerunner");
    expect(dashboard.uid).toMatch(/^[A-Za-z0-9_-]{8,40}$/);
    expect(dashboard.id).toBeNull();
    expect(Number.isInteger(dashboard.schemaVersion)).toBe(true);
    expect(dashboard.time).toEqual({ from: "now-24h", to: "now" });
    expect(panels.length).toBeGreaterThan(5);
    expect(new Set(panels.map((p) => p.id)).size).toBe(panels.length);
    for (const p of panels) {
      expect(p.gridPos.x + p.gridPos.w, p.title).toBeLessThanOrEqual(24);
      expect(p.gridPos.h, p.title).toBeGreaterThan(0);
    }
  });

  it("asks which Prometheus to use on import, and every query uses that choice", () => {
    const variables = dashboard.templating.list as { name: string; type: string; query: unknown }[];
    expect(variables.find((v) => v.name === "datasource")).toMatchObject({ type: "datasource", query: "prometheus" });
    for (const p of panels.filter((p) => p.type !== "row")) {
      expect(p.datasource, p.title).toEqual({ type: "prometheus", uid: CHOSEN });
      for (const t of p.targets ?? []) expect(t.datasource.uid, p.title).toBe(CHOSEN);
    }
  });

  it("charts queue time, run time and startup as percentiles of their histograms, and runners by state", () => {
    const exprs = queries.map((q) => q.expr).join("\n");
    for (const h of Object.values(HISTOGRAMS)) {
      expect(exprs).toContain(`histogram_quantile(0.5, sum by (le, scale_set) (rate(${h.name}_bucket`);
      expect(exprs).toContain(`histogram_quantile(0.95, sum by (le, scale_set) (rate(${h.name}_bucket`);
    }
    expect(exprs).toContain("sum by (runner_status) (edgerunner_instances");
  });

  it("queries only metrics /metrics exports", () => {
    const exported = exportedFamilies();
    // The source scan finds the route's families (it would find none if the route were rewritten).
    for (const known of ["edgerunner_instances", "edgerunner_webhooks_total", "edgerunner_github_rate_limit_remaining"]) {
      expect(exported).toContain(known);
    }
    const histograms = histogramFamilies();
    expect(histograms).toContain("edgerunner_reconcile_duration_seconds");
    const family = (name: string) => {
      const base = name.replace(/_(bucket|sum|count)$/, "");
      return base !== name && histograms.has(base) ? base : name;
    };
    const used = queries.flatMap((q) => [...q.expr.matchAll(/\bedgerunner_[a-z0-9_]+/g)].map((m) => ({ panel: q.panel, name: m[0] })));
    expect(used.length).toBeGreaterThan(10);
    expect(used.filter((u) => !exported.has(family(u.name)))).toEqual([]);
  });
});
