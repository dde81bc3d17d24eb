import type { FC } from "hono/jsx";
import type { RunnerSample } from "../../scaleset/runner/runner-sample";
import { SAMPLE_SLOT_MS } from "../../scaleset/runner/runner-sample";
import { HOUR_MS, hourlyQueuePercentiles, type QueueWait } from "./queue-percentiles";
import { shortDuration } from "./scales";
import { type ChartSpec, TimeChart } from "./time-chart";

/**
 * The dashboard's two pictures of the last 24 hours, for the overview (every scale set) and a
 * scale set's page: queue time (p50 and p95 per hour, from the jobs that started) and runners by
 * state (from the scale set objects' 5-minute samples), with the min idle the planner worked to.
 */

export const CHART_WINDOW_MS = 24 * HOUR_MS;

const at = (t: number) => `${new Date(t).toISOString().slice(11, 16)} UTC`;

export function queueTimeChart(waits: readonly QueueWait[], now: number, scope: string): ChartSpec {
  const hours = hourlyQueuePercentiles(waits, now);
  const jobs = hours.reduce((n, h) => n + h.jobs, 0);
  const worst = hours.reduce<(typeof hours)[number] | null>((w, h) => (w === null || h.p95 > w.p95 ? h : w), null);
  return {
    id: "queue-time-chart",
    title: `Queue time, last 24 hours (${scope})`,
    description: worst
      ? `Time from queued to in progress of the ${jobs} job(s) that started in the last 24 hours, 50th and 95th percentile per hour; the highest p95 was ${shortDuration(worst.p95)}, in the hour from ${at(worst.hour)}.`
      : "No job started in the last 24 hours.",
    from: now - CHART_WINDOW_MS,
    to: now,
    unit: "duration",
    series: [
      { id: "p50", label: "p50", color: "#0b5cad", kind: "line", spanMs: HOUR_MS, points: hours.map((h) => ({ t: h.hour, v: h.p50 })) },
      { id: "p95", label: "p95", color: "#cf222e", kind: "line", spanMs: HOUR_MS, points: hours.map((h) => ({ t: h.hour, v: h.p95 })) },
    ],
    emptyText: "No job started in the last 24 hours: nothing to chart yet.",
  };
}

/** The schedule's bands, said in words (the chart's description). */
const scheduleText = (bands: readonly ChartScheduleBand[]) =>
  bands.length
    ? ` Shaded, the schedule entries in force: ${bands.map((b) => `${b.name} (min idle ${b.minIdle}) from ${at(b.from)} to ${at(b.to)}`).join("; ")}.`
    : "";

/** A schedule entry in force over a stretch of the window (scaleset/schedule/schedule-bands.ts). */
export interface ChartScheduleBand {
  from: number;
  to: number;
  name: string;
  minIdle: number;
}

export function runnersChart(
  samples: readonly RunnerSample[],
  now: number,
  scope: string,
  schedule: readonly ChartScheduleBand[] = [],
): ChartSpec {
  const last = samples.reduce<RunnerSample | null>((l, s) => (l === null || s.at > l.at ? s : l), null);
  const series = (id: keyof Omit<RunnerSample, "at">, label: string, color: string, kind: "area" | "step") => ({
    id: id === "minIdle" ? "min_idle" : id,
    label,
    color,
    kind,
    spanMs: SAMPLE_SLOT_MS,
    points: samples.map((s) => ({ t: s.at, v: s[id] })),
  });
  return {
    id: "runners-chart",
    title: `Runners by state, last 24 hours (${scope})`,
    description: last
      ? `Runners every 5 minutes over the last 24 hours, stacked: idle, busy, booting and other (being deleted, in error), with the min idle line. At ${at(last.at)}: ${last.idle} idle, ${last.busy} busy, ${last.booting} booting, ${last.other} other, min idle ${last.minIdle}.${scheduleText(schedule)}`
      : "No samples in the last 24 hours.",
    from: now - CHART_WINDOW_MS,
    to: now,
    unit: "count",
    series: [
      series("idle", "idle", "#1a7f37", "area"),
      series("busy", "busy", "#0b5cad", "area"),
      series("booting", "booting", "#bf8700", "area"),
      series("other", "other", "#8c959f", "area"),
      series("minIdle", "min idle", "#1d232b", "step"),
    ],
    bands: schedule.map((b) => ({ from: b.from, to: b.to, label: `${b.name}: min idle ${b.minIdle}` })),
    emptyText:
      "No samples yet: scale set objects record their runners every 5 minutes as they reconcile; one with no runners and min idle 0 records nothing.",
  };
}

/** Both charts side by side. */
export const DashboardCharts: FC<{
  waits: readonly QueueWait[];
  samples: readonly RunnerSample[];
  now: number;
  scope: string;
  /** A scale set's schedule, drawn as bands behind its runners (none on the overview: each scale set has its own). */
  schedule?: readonly ChartScheduleBand[];
}> = (p) => (
  <div class="charts">
    <TimeChart spec={queueTimeChart(p.waits, p.now, p.scope)} />
    <TimeChart spec={runnersChart(p.samples, p.now, p.scope, p.schedule)} />
  </div>
);
