import { describe, expect, it } from "vitest";
import { SAMPLE_SLOT_MS } from "../../src/scaleset/runner/runner-sample";
import { DashboardCharts, queueTimeChart, runnersChart } from "../../src/ui/charts/dashboard-charts";
import { HOUR_MS, hourlyQueuePercentiles, percentile } from "../../src/ui/charts/queue-percentiles";
import { hourTicks, shortDuration, valueTicks } from "../../src/ui/charts/scales";
import { type ChartSpec, chartGeometry, TimeChart } from "../../src/ui/charts/time-chart";

const NOW = Date.parse("2024-05-01T12:34:00Z");
const H = (h: number) => Date.parse(`2024-05-01T${String(h).padStart(2, "0")}:00:00Z`);

/** A component's HTML, as Hono renders it for a page. */
const html = (node: unknown) => String(node);
/** The values of `attr` on the elements of the HTML, in order. */
const attrs = (text: string, attr: string) => [...text.matchAll(new RegExp(`${attr}="([^"]*)"`, "g"))].map((m) => m[1]);

describe("queue time percentiles", () => {
  it("nearest rank", () => {
    const xs = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10];
    expect(percentile(xs, 50)).toBe(5);
    expect(percentile(xs, 95)).toBe(10);
    expect(percentile([7], 95)).toBe(7);
    expect(percentile([], 50)).toBeNull();
  });

  it("per hour of the last 24, for hours in which jobs started, oldest first", () => {
    const waits = [
      // 10:00–11:00: waits 10 s, 20 s, 30 s, 40 s → p50 20 s, p95 40 s.
      ...[10, 20, 30, 40].map((s, i) => ({ startedAt: H(10) + i * 60_000, waitMs: s * 1000 })),
      // 12:00–now: one job of 2 minutes; one whose clocks disagree counts as zero.
      { startedAt: H(12) + 5 * 60_000, waitMs: 120_000 },
      { startedAt: H(12) + 6 * 60_000, waitMs: -3_000 },
      // Before the window: left out.
      { startedAt: H(12) - 25 * HOUR_MS, waitMs: 1_000 },
    ];
    expect(hourlyQueuePercentiles(waits, NOW)).toEqual([
      { hour: H(10), jobs: 4, p50: 20, p95: 40 },
      { hour: H(12), jobs: 2, p50: 0, p95: 120 },
    ]);
  });

  it("counts the jobs of the oldest hour that started within the last 24 hours, and only those", () => {
    const from = NOW - 24 * HOUR_MS;
    // 12:34 yesterday: the oldest hour, 12:00–13:00, is only partly in the window.
    const oldestHour = H(12) - 24 * HOUR_MS;
    const waits = [
      { startedAt: from + 60_000, waitMs: 5_000 },
      { startedAt: from - 60_000, waitMs: 9_000 },
    ];
    expect(hourlyQueuePercentiles(waits, NOW)).toEqual([{ hour: oldestHour, jobs: 1, p50: 5, p95: 5 }]);
  });
});

describe("chart axes", () => {
  it("short durations", () => {
    expect([5, 60, 90, 3600, 5400, 7200].map(shortDuration)).toEqual(["5s", "1m", "1m30s", "1h", "1h30m", "2h"]);
  });

  it("value ticks from zero past the highest value, in round steps", () => {
    expect(valueTicks(7, "count").map((t) => t.value)).toEqual([0, 2, 4, 6, 8]);
    expect(valueTicks(0, "count").map((t) => t.value)).toEqual([0, 1]);
    expect(valueTicks(130, "count").map((t) => t.value)).toEqual([0, 50, 100, 150]);
    expect(valueTicks(130, "duration").map((t) => t.label)).toEqual(["0s", "1m", "2m", "3m"]);
    expect(valueTicks(5000, "duration").map((t) => t.label)).toEqual(["0s", "30m", "1h", "1h30m"]);
  });

  it("hour ticks every three hours, on the hour, in UTC", () => {
    expect(hourTicks(NOW - 24 * HOUR_MS, NOW).map((t) => t.label)).toEqual([
      "15:00",
      "18:00",
      "21:00",
      "00:00",
      "03:00",
      "06:00",
      "09:00",
      "12:00",
    ]);
  });
});

const spec = (over: Partial<ChartSpec> = {}): ChartSpec => ({
  id: "c",
  title: "Things",
  description: "Things over a day.",
  from: NOW - 24 * HOUR_MS,
  to: NOW,
  unit: "count",
  series: [],
  emptyText: "Nothing yet.",
  ...over,
});

describe("chartGeometry", () => {
  it("nothing to draw without a point in the window", () => {
    expect(chartGeometry(spec())).toBeNull();
    const old = { id: "a", label: "a", color: "#000", kind: "line" as const, spanMs: HOUR_MS, points: [{ t: NOW - 30 * HOUR_MS, v: 1 }] };
    expect(chartGeometry(spec({ series: [old] }))).toBeNull();
  });

  it("stacks areas on each other and scales the axis to the top of the stack", () => {
    const t = H(12);
    const g = chartGeometry(
      spec({
        series: [
          { id: "a", label: "a", color: "#000", kind: "area", spanMs: SAMPLE_SLOT_MS, points: [{ t, v: 3 }] },
          { id: "b", label: "b", color: "#111", kind: "area", spanMs: SAMPLE_SLOT_MS, points: [{ t, v: 4 }] },
          { id: "m", label: "m", color: "#222", kind: "step", spanMs: SAMPLE_SLOT_MS, points: [{ t, v: 2 }] },
        ],
      }),
    )!;
    expect(g.yTicks.map((y) => y.label)).toEqual(["0", "2", "4", "6", "8"]);
    const yOf = (v: number) => Math.round((g.plot.bottom - (v / 8) * (g.plot.bottom - g.plot.top)) * 10) / 10;
    // Area b goes from a's top (3) to 7; the step line sits at 2.
    const [a, b, m] = g.shapes;
    expect(a!.d).toContain(` ${yOf(3)} `);
    expect(b!.d).toContain(` ${yOf(3)} `);
    expect(b!.d).toContain(` ${yOf(7)} `);
    expect(m!.d).toMatch(new RegExp(`^M[\\d.]+ ${yOf(2)} H[\\d.]+$`));
  });

  it("does not join points further apart than one and a half spans", () => {
    const line = (hours: number[]) =>
      chartGeometry(
        spec({
          series: [{ id: "p", label: "p", color: "#000", kind: "line", spanMs: HOUR_MS, points: hours.map((h) => ({ t: H(h), v: 5 })) }],
        }),
      )!.shapes[0]!;
    expect(line([9, 10, 11]).d.match(/M/g)).toHaveLength(1);
    expect(line([9, 10, 12]).d.match(/M/g)).toHaveLength(2);
    expect(line([9, 10, 12]).dots).toHaveLength(3);
  });
});

describe("TimeChart", () => {
  it("an SVG with a title and description for screen readers, axes, a legend and one shape per series", () => {
    const text = html(
      TimeChart({
        spec: spec({
          series: [
            { id: "idle", label: "idle", color: "#1a7f37", kind: "area", spanMs: SAMPLE_SLOT_MS, points: [{ t: H(11), v: 2 }] },
            { id: "min_idle", label: "min idle", color: "#1d232b", kind: "step", spanMs: SAMPLE_SLOT_MS, points: [{ t: H(11), v: 1 }] },
          ],
        }),
      }),
    );
    expect(text).toContain('role="img"');
    expect(text).toContain('aria-labelledby="c-title c-desc"');
    expect(text).toContain('<title id="c-title">Things</title>');
    expect(text).toContain('<desc id="c-desc">Things over a day.</desc>');
    expect(attrs(text, "data-series")).toEqual(["idle", "min_idle"]);
    expect(text).toContain(">12:00</text>");
    expect(text).toContain(">min idle</text>");
    expect(text).not.toContain("data-chart-empty");
  });

  it("says so instead of drawing when there is no data", () => {
    const text = html(TimeChart({ spec: spec() }));
    expect(text).not.toContain("<svg");
    expect(text).toContain("data-chart-empty");
    expect(text).toContain("Nothing yet.");
  });

  it("escapes what it is given", () => {
    const text = html(TimeChart({ spec: spec({ title: "<b>x</b>" }) }));
    expect(text).not.toContain("<b>x</b>");
    expect(text).toContain("&lt;b&gt;x&lt;/b&gt;");
  });
});

describe("the dashboard's charts", () => {
  it("queue time: p50 and p95 lines, with the worst hour in the description", () => {
    const waits = [10, 20, 30, 40].map((s, i) => ({ startedAt: H(10) + i * 60_000, waitMs: s * 1000 }));
    const c = queueTimeChart(waits, NOW, "linux");
    expect(c.series.map((s) => [s.id, s.points])).toEqual([
      ["p50", [{ t: H(10), v: 20 }]],
      ["p95", [{ t: H(10), v: 40 }]],
    ]);
    expect(c.title).toContain("linux");
    expect(c.description).toContain("4 job(s)");
    expect(c.description).toContain("40s, in the hour from 10:00 UTC");
  });

  it("runners by state: stacked idle, busy, booting and other, and the min idle line, from the samples", () => {
    const samples = [0, 1].map((i) => ({ at: H(11) + i * SAMPLE_SLOT_MS, idle: 2, busy: 3 + i, booting: 1, other: 0, minIdle: 2 + i }));
    const c = runnersChart(samples, NOW, "linux");
    expect(c.series.map((s) => [s.id, s.kind])).toEqual([
      ["idle", "area"],
      ["busy", "area"],
      ["booting", "area"],
      ["other", "area"],
      ["min_idle", "step"],
    ]);
    expect(c.series.find((s) => s.id === "min_idle")!.points).toEqual([
      { t: H(11), v: 2 },
      { t: H(11) + SAMPLE_SLOT_MS, v: 3 },
    ]);
    expect(c.description).toContain("4 busy");
    const text = html(DashboardCharts({ waits: [], samples, now: NOW, scope: "linux" }));
    expect(attrs(text, "data-series")).toEqual(["idle", "busy", "booting", "other", "min_idle"]);
    expect(text).toContain("No job started in the last 24 hours");
  });

  it("a scale set's schedule: bands behind its runners, clamped to the window, and said in the description", () => {
    const samples = [{ at: H(11), idle: 2, busy: 1, booting: 0, other: 0, minIdle: 3 }];
    const schedule = [
      { from: NOW - 30 * HOUR_MS, to: H(8), name: "night", minIdle: 1 },
      { from: H(8), to: NOW, name: "workday", minIdle: 3 },
    ];
    const c = runnersChart(samples, NOW, "linux", schedule);
    expect(c.description).toContain("Shaded, the schedule entries in force: night (min idle 1) from");
    expect(c.description).toContain("workday (min idle 3) from 08:00 UTC to 12:34 UTC");
    const g = chartGeometry(c)!;
    expect(g.bands.map((b) => b.label)).toEqual(["night: min idle 1", "workday: min idle 3"]);
    // The night began before the window: its band starts at the plot's left edge; the day's ends at its right.
    expect(g.bands[0]!.x).toBe(g.plot.left);
    expect(g.bands[1]!.x + g.bands[1]!.width).toBeCloseTo(g.plot.right, 0);
    // An entry keeps its shade wherever it comes back.
    const again = chartGeometry(
      runnersChart(samples, NOW, "linux", [
        ...schedule.slice(0, 1),
        { ...schedule[1]!, to: H(10) },
        { ...schedule[0]!, from: H(10), to: NOW },
      ]),
    )!;
    expect(again.bands.map((b) => b.shade)).toEqual([0, 1, 0]);
    const text = html(DashboardCharts({ waits: [], samples, now: NOW, scope: "linux", schedule }));
    expect(attrs(text, "data-band")).toEqual(["night: min idle 1", "workday: min idle 3"]);
  });
});
