/**
 * Which table a retention run prunes next, and when it stops. Pure.
 *
 * Each batch deletes "the oldest N eligible rows" of one table, so a run needs no cursor: when
 * the query cap stops it, the next run starts over and finds the rows that are left. A table is
 * done for this run when a batch comes back short (nothing eligible is left). A table walked by
 * its key (key-walk.ts) keeps a cursor in D1 instead, and is done when its lap ends. Tables take turns,
 * so a backlog in one (the first run on a year-old database) does not starve the others; a table
 * with `after` waits until that table is done (rows that reference another table's go first).
 */

import type { Cutoffs, RetentionSettings } from "./settings";

export interface PruneTarget {
  table: string;
  /** Which cutoff applies. */
  window: keyof Cutoffs;
  /** Only pruned once this table is done for the run. */
  after?: string;
  /** D1 queries one batch costs (statements in it): 2 when totals are kept before the DELETE. */
  queries: number;
}

export interface RunProgress {
  /** D1 queries spent so far. */
  queries: number;
  deleted: Record<string, number>;
  /** Tables with nothing eligible left. */
  finished: string[];
  /** The table of the last batch: the next turn goes to the one after it. */
  last: string | null;
}

/** Queries a run keeps for itself after pruning: the write of its figures. */
export const RESERVED_QUERIES = 1;

export function startRun(targets: readonly PruneTarget[]): RunProgress {
  return { queries: 0, deleted: Object.fromEntries(targets.map((t) => [t.table, 0])), finished: [], last: null };
}

export function nextTarget<T extends PruneTarget>(
  targets: readonly T[],
  p: RunProgress,
  s: Pick<RetentionSettings, "maxQueries">,
): T | null {
  const ready = (t: T) =>
    !p.finished.includes(t.table) &&
    (t.after === undefined || p.finished.includes(t.after)) &&
    p.queries + t.queries + RESERVED_QUERIES <= s.maxQueries;
  const start = p.last === null ? 0 : targets.findIndex((t) => t.table === p.last) + 1;
  for (let i = 0; i < targets.length; i++) {
    const t = targets[(start + i) % targets.length]!;
    if (ready(t)) return t;
  }
  return null;
}

/** The progress after one batch of `target` that deleted `deleted` rows; `done`: nothing eligible is left for this run (a short batch). */
export function afterBatch(p: RunProgress, target: PruneTarget, deleted: number, done: boolean): RunProgress {
  const { table } = target;
  return {
    queries: p.queries + target.queries,
    deleted: { ...p.deleted, [table]: (p.deleted[table] ?? 0) + deleted },
    finished: done ? [...p.finished, table] : p.finished,
    last: table,
  };
}

/** True when every table ran out of eligible rows (false: the cap stopped the run; the next one goes on). */
export function runComplete(targets: readonly PruneTarget[], p: RunProgress): boolean {
  return targets.every((t) => p.finished.includes(t.table));
}
