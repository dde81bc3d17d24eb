import { peekTally, type TallyUnit } from "../lib/usage-tally";
import type { Exposition } from "./prometheus";

/**
 * /metrics' share of the usage tally (lib/usage-tally.ts): Cloudflare's billing units by what
 * caused them, from the first of the month (UTC), so a month's series is its bill's; Prometheus
 * reads the monthly restart as a counter reset (rate() and increase() carry on). What this isolate
 * has not written yet is added, as the rejected webhooks are.
 */

const P = "edgerunner_";

const SERIES: Record<TallyUnit, { name: string; help: string; label: "operation" | "kind"; scale?: number }> = {
  d1_rows_read: { name: "d1_rows_read_total", help: "D1 rows read (billed), by what read them, this month", label: "operation" },
  d1_rows_written: { name: "d1_rows_written_total", help: "D1 rows written (billed), by what wrote them, this month", label: "operation" },
  do_rows_read: { name: "do_rows_read_total", help: "Durable Object storage rows read (billed), by cause, this month", label: "operation" },
  do_rows_written: {
    name: "do_rows_written_total",
    help: "Durable Object storage rows written (billed; each alarm set is one), by cause, this month",
    label: "operation",
  },
  worker_requests: { name: "worker_invocations_total", help: "Worker requests (billed), by kind, this month", label: "kind" },
  do_requests: {
    name: "do_invocations_total",
    help: "Durable Object requests: RPC calls and alarms (billed), by kind, this month",
    label: "kind",
  },
  do_active_ms: {
    name: "do_active_seconds_total",
    help: "Durable Object active wall time (billed as GB-s at 128 MB), by kind, this month",
    label: "kind",
    scale: 1 / 1000,
  },
  subrequests: { name: "subrequests_total", help: "Subrequests (fetches and D1 calls), by cause, this month", label: "operation" },
};

export function addUsageMetrics(m: Exposition, stored: readonly { unit: string; kind: string; value: number }[]): void {
  const totals = new Map<string, number>();
  const add = (unit: string, kind: string, v: number) => totals.set(`${unit}|${kind}`, (totals.get(`${unit}|${kind}`) ?? 0) + v);
  for (const r of stored) add(r.unit, r.kind, r.value);
  for (const [unit, kind, v] of peekTally()) add(unit, kind, v);
  for (const [unit, s] of Object.entries(SERIES)) {
    m.declare(`${P}${s.name}`, s.help, "counter");
    for (const [key, v] of [...totals].sort(([a], [b]) => (a < b ? -1 : 1))) {
      const bar = key.indexOf("|");
      if (key.slice(0, bar) !== unit) continue;
      m.add(`${P}${s.name}`, s.help, "counter", { [s.label]: key.slice(bar + 1) }, v * (s.scale ?? 1));
    }
  }
}
