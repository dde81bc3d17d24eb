import type { FC } from "hono/jsx";
import { hourTicks, valueTicks } from "./scales";

/**
 * A chart over time, server-rendered as SVG (no script): lines, stacked areas and step lines
 * with their axes, a legend, and a title and description for screen readers. `chartGeometry` is
 * the pure part (where everything goes); `TimeChart` writes it out. Every series' shape carries
 * `data-series` with its id, so a test can find it.
 */

export interface ChartPoint {
  /** Start of the span the value stands for (unix ms). */
  t: number;
  v: number;
}

export interface ChartSeries {
  id: string;
  label: string;
  color: string;
  /**
   * `line`: a line through the middle of each span, with a dot per point; `area`: stacked on the
   * areas listed before it; `step`: a dashed level held over each span (a setting, like min idle).
   */
  kind: "line" | "area" | "step";
  points: readonly ChartPoint[];
  /** The time one point stands for (ms); points further apart than 1.5 spans are not joined. */
  spanMs: number;
}

export interface ChartSpec {
  /** The figure's id, and the prefix of its title's and description's. */
  id: string;
  title: string;
  /** What the chart shows, in a sentence or two (read out instead of the picture). */
  description: string;
  from: number;
  to: number;
  unit: "count" | "duration";
  series: readonly ChartSeries[];
  /** Stretches of time shaded behind the series, each with its label (a schedule entry in force). */
  bands?: readonly { from: number; to: number; label: string }[];
  /** Shown instead of the chart when no series has a point. */
  emptyText: string;
}

export interface ChartShape {
  id: string;
  label: string;
  color: string;
  kind: ChartSeries["kind"];
  /** SVG path data, one sub-path per run of joined points. */
  d: string;
  dots: { x: number; y: number }[];
}

export interface ChartGeometry {
  width: number;
  height: number;
  plot: { left: number; top: number; right: number; bottom: number };
  xTicks: { x: number; label: string }[];
  yTicks: { y: number; label: string }[];
  shapes: ChartShape[];
  /** `shade`: the same for every band of one label (an entry keeps its colour across the day). */
  bands: { x: number; width: number; label: string; shade: number }[];
  legend: { id: string; label: string; color: string; kind: ChartSeries["kind"] }[];
}

const WIDTH = 640;
const HEIGHT = 220;
const PLOT = { left: 52, top: 30, right: WIDTH - 12, bottom: HEIGHT - 24 };

const r1 = (n: number) => Math.round(n * 10) / 10;

/** Runs of points no further apart than 1.5 spans, in time order. */
function runs(points: readonly ChartPoint[], spanMs: number): ChartPoint[][] {
  const out: ChartPoint[][] = [];
  for (const p of [...points].sort((a, b) => a.t - b.t)) {
    const run = out.at(-1);
    const prev = run?.at(-1);
    if (run && prev && p.t - prev.t <= spanMs * 1.5) run.push(p);
    else out.push([p]);
  }
  return out;
}

/** Where everything goes; null when there is nothing to draw. */
export function chartGeometry(spec: ChartSpec): ChartGeometry | null {
  const visible = spec.series.map((s) => ({ ...s, points: s.points.filter((p) => p.t >= spec.from - s.spanMs && p.t <= spec.to) }));
  if (!visible.some((s) => s.points.length)) return null;

  // Areas stack: each one's base at a time is the sum of the areas before it there.
  const base = new Map<number, number>();
  const stacked = visible.map((s) => {
    if (s.kind !== "area") return { ...s, lows: s.points.map(() => 0), highs: s.points.map((p) => p.v) };
    const lows = s.points.map((p) => base.get(p.t) ?? 0);
    const highs = s.points.map((p, i) => lows[i]! + p.v);
    s.points.forEach((p, i) => {
      base.set(p.t, highs[i]!);
    });
    return { ...s, lows, highs };
  });
  const max = Math.max(0, ...stacked.flatMap((s) => s.highs));
  const yTicks = valueTicks(max, spec.unit);
  const top = yTicks.at(-1)!.value;

  const x = (t: number) =>
    r1(PLOT.left + ((Math.min(Math.max(t, spec.from), spec.to) - spec.from) / (spec.to - spec.from)) * (PLOT.right - PLOT.left));
  const y = (v: number) => r1(PLOT.bottom - (v / top) * (PLOT.bottom - PLOT.top));

  const shapes: ChartShape[] = stacked.map((s) => {
    const at = new Map(s.points.map((p, i) => [p, { low: s.lows[i]!, high: s.highs[i]! }]));
    const mid = (p: ChartPoint) => x(p.t + s.spanMs / 2);
    const parts = runs(s.points, s.spanMs).map((run) => {
      if (s.kind === "step") {
        return run.map((p, i) => `${i ? "L" : "M"}${x(p.t)} ${y(p.v)} H${x(p.t + s.spanMs)}`).join(" ");
      }
      const line = run.map((p, i) => `${i ? "L" : "M"}${mid(p)} ${y(at.get(p)!.high)}`).join(" ");
      if (s.kind === "line") return line;
      // An area of one point is a bar as wide as its span; a longer run is the band between its two lines.
      if (run.length === 1) {
        const p = run[0]!;
        const v = at.get(p)!;
        return `M${x(p.t)} ${y(v.low)} L${x(p.t)} ${y(v.high)} L${x(p.t + s.spanMs)} ${y(v.high)} L${x(p.t + s.spanMs)} ${y(v.low)} Z`;
      }
      const back = [...run].reverse().map((p) => `L${mid(p)} ${y(at.get(p)!.low)}`);
      return `${line} ${back.join(" ")} Z`;
    });
    return {
      id: s.id,
      label: s.label,
      color: s.color,
      kind: s.kind,
      d: parts.join(" "),
      dots: s.kind === "line" ? s.points.map((p) => ({ x: mid(p), y: y(at.get(p)!.high) })) : [],
    };
  });

  return {
    width: WIDTH,
    height: HEIGHT,
    plot: PLOT,
    xTicks: hourTicks(spec.from, spec.to).map((t) => ({ x: x(t.value), label: t.label })),
    yTicks: yTicks.map((t) => ({ y: y(t.value), label: t.label })),
    shapes,
    bands: (spec.bands ?? [])
      .filter((b) => b.to > spec.from && b.from < spec.to)
      .map((b, _, all) => ({
        x: x(b.from),
        width: r1(x(b.to) - x(b.from)),
        label: b.label,
        shade: [...new Set(all.map((a) => a.label))].indexOf(b.label),
      })),
    legend: spec.series.map((s) => ({ id: s.id, label: s.label, color: s.color, kind: s.kind })),
  };
}

const BAND_COLORS = ["#fff8c5", "#ddf4ff", "#fbefff", "#dafbe1"];

const AXIS_TEXT = { "font-size": "11", fill: "#5c6773" };

/** The chart as a figure: its title, and the SVG or, without data, `emptyText`. */
export const TimeChart: FC<{ spec: ChartSpec }> = ({ spec }) => {
  const g = chartGeometry(spec);
  const titleId = `${spec.id}-title`;
  const descId = `${spec.id}-desc`;
  return (
    <figure class="chart" id={spec.id} data-chart={spec.id}>
      <figcaption>{spec.title}</figcaption>
      {g ? (
        <svg
          xmlns="http://www.w3.org/2000/svg"
          viewBox={`0 0 ${g.width} ${g.height}`}
          width="100%"
          role="img"
          aria-labelledby={`${titleId} ${descId}`}
          font-family="system-ui, sans-serif"
        >
          <title id={titleId}>{spec.title}</title>
          <desc id={descId}>{spec.description}</desc>
          {g.bands.length ? (
            <g data-bands="">
              {g.bands.map((b) => (
                <g data-band={b.label}>
                  <title>{b.label}</title>
                  <rect
                    x={b.x}
                    y={g.plot.top}
                    width={b.width}
                    height={g.plot.bottom - g.plot.top}
                    fill={BAND_COLORS[b.shade % BAND_COLORS.length]}
                    fill-opacity="0.7"
                  />
                  {b.width >= 40 ? (
                    <text x={b.x + 4} y={g.plot.top + 11} {...AXIS_TEXT} font-size="10">
                      {b.label}
                    </text>
                  ) : null}
                </g>
              ))}
            </g>
          ) : null}
          <g data-axis="y">
            {g.yTicks.map((t) => (
              <g>
                <line x1={g.plot.left} x2={g.plot.right} y1={t.y} y2={t.y} stroke="#dfe3e8" stroke-width="1" />
                <text x={g.plot.left - 6} y={t.y + 4} text-anchor="end" {...AXIS_TEXT}>
                  {t.label}
                </text>
              </g>
            ))}
          </g>
          <g data-axis="x">
            <line x1={g.plot.left} x2={g.plot.right} y1={g.plot.bottom} y2={g.plot.bottom} stroke="#8c959f" stroke-width="1" />
            {g.xTicks.map((t) => (
              <g>
                <line x1={t.x} x2={t.x} y1={g.plot.bottom} y2={g.plot.bottom + 4} stroke="#8c959f" stroke-width="1" />
                <text x={t.x} y={g.plot.bottom + 16} text-anchor="middle" {...AXIS_TEXT}>
                  {t.label}
                </text>
              </g>
            ))}
          </g>
          {g.shapes.map((s) =>
            s.kind === "area" ? (
              <path data-series={s.id} d={s.d} fill={s.color} fill-opacity="0.55" stroke={s.color} stroke-width="1">
                <title>{s.label}</title>
              </path>
            ) : (
              <g data-series={s.id}>
                <title>{s.label}</title>
                <path
                  d={s.d}
                  fill="none"
                  stroke={s.color}
                  stroke-width="2"
                  stroke-dasharray={s.kind === "step" ? "6 4" : undefined}
                  stroke-linejoin="round"
                />
                {s.dots.map((p) => (
                  <circle cx={p.x} cy={p.y} r="2.5" fill={s.color} />
                ))}
              </g>
            ),
          )}
          <g data-legend="">
            {g.legend.map((l, i) => (
              <g transform={`translate(${g.plot.left + i * 110} 8)`}>
                {l.kind === "area" ? (
                  <rect width="12" height="12" fill={l.color} fill-opacity="0.55" stroke={l.color} />
                ) : (
                  <line
                    x1="0"
                    x2="14"
                    y1="6"
                    y2="6"
                    stroke={l.color}
                    stroke-width="2"
                    stroke-dasharray={l.kind === "step" ? "4 3" : undefined}
                  />
                )}
                <text x="18" y="10" {...AXIS_TEXT} fill="#1d232b">
                  {l.label}
                </text>
              </g>
            ))}
          </g>
        </svg>
      ) : (
        <p class="mut small" data-chart-empty="">
          {spec.emptyText}
        </p>
      )}
    </figure>
  );
};
