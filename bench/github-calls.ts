/**
 * The coordinator's GitHub REST calls during a burst, as the fake GitHub recorded them: by
 * operation, by credential, and the secondary-limit answers it provoked with why. Runner
 * sessions are the simulator's and never reach these records.
 */
import { DEFAULT_GITHUB_BUDGET } from "../src/github/budget/budget.ts";
import type { RecordedRequest } from "../test/fake-github/types.ts";

/** The coordinator's GitHub budget window (its default). */
const BUDGET_WINDOW_MS = DEFAULT_GITHUB_BUDGET.windowMs;

/** The most secondary-limit points (mutations 5, reads 1) that arrived within any 60 s. */
export function busiestMinutePoints(reqs: RecordedRequest[]): number {
  const arrivals = reqs.map((r) => ({ at: r.arrived_at, points: ["GET", "HEAD"].includes(r.method) ? 1 : 5 })).sort((a, b) => a.at - b.at);
  let best = 0;
  let sum = 0;
  for (let head = 0, tail = 0; head < arrivals.length; head++) {
    sum += arrivals[head]!.points;
    while (arrivals[head]!.at - arrivals[tail]!.at >= 60_000) sum -= arrivals[tail++]!.points;
    best = Math.max(best, sum);
  }
  return best;
}

/** Calls let in per budget window (by arrival): the five busiest, with how far into the window the first and last arrived. */
export function busiestWindows(reqs: RecordedRequest[]) {
  const windows = new Map<number, number[]>();
  for (const r of reqs) {
    const start = r.arrived_at - (r.arrived_at % BUDGET_WINDOW_MS);
    windows.set(start, [...(windows.get(start) ?? []), r.arrived_at - start]);
  }
  return [...windows.entries()]
    .sort((a, b) => b[1].length - a[1].length)
    .slice(0, 5)
    .map(([start, offsets]) => ({
      window_start: start,
      calls: offsets.length,
      first_ms: Math.min(...offsets),
      last_ms: Math.max(...offsets),
    }));
}

export function byOperation(reqs: RecordedRequest[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const r of reqs) {
    const op = `${r.method} ${r.path.replace(/\/\d+(?=\/|$)/g, "/{id}").replace(/^\/repos\/[^/]+\/[^/]+/, "/repos/{repo}")}`;
    out[op] = (out[op] ?? 0) + 1;
  }
  return Object.fromEntries(Object.entries(out).sort(([, a], [, b]) => b - a));
}

/** Calls by the credential that made them (the fake's principal: a PAT's login, an installation's id). */
export function byCredential(reqs: RecordedRequest[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const r of reqs) out[r.principal ?? "none"] = (out[r.principal ?? "none"] ?? 0) + 1;
  return Object.fromEntries(Object.entries(out).sort(([a], [b]) => a.localeCompare(b)));
}

function refusals(refused: RecordedRequest[]) {
  return {
    total: refused.length,
    secondary_points: refused.filter((r) => r.secondary_limit === "points").length,
    secondary_concurrency: refused.filter((r) => r.secondary_limit === "concurrency").length,
    other: refused.filter((r) => !r.secondary_limit).length,
  };
}

/**
 * The 403/429 answers the coordinator provoked, by the limit that refused; per credential too
 * when the pool has several (`logins`: every credential's, so one refused nothing shows 0).
 */
export function rateLimitedAnswers(reqs: RecordedRequest[], logins: string[]) {
  const refused = reqs.filter((r) => r.status === 403 || r.status === 429);
  const admitted = reqs.filter((r) => !r.secondary_limit);
  return {
    ...refusals(refused),
    ...(logins.length > 1 && {
      by_credential: Object.fromEntries(logins.map((l) => [l, refusals(refused.filter((r) => r.principal === l))])),
    }),
    // Why, when there are any: GitHub counts arrivals, so the busiest 60 s of arrivals it let in
    // (900 is its limit, per credential), and where in the coordinator's budget window each refused one arrived.
    ...(refused.length && {
      busiest_minute_points:
        logins.length > 1
          ? Object.fromEntries(logins.map((l) => [l, busiestMinutePoints(admitted.filter((r) => r.principal === l))]))
          : busiestMinutePoints(admitted),
      busiest_budget_windows: busiestWindows(admitted),
      refused_at_window_offset_ms: refused.map((r) => r.arrived_at % BUDGET_WINDOW_MS),
    }),
  };
}
