import type { ScaleSetRecord } from "../db/scaleset/snapshot-store";
import { recordRefusals } from "../db/shapes/shaped-job-store";
import { logger } from "../observability/log";
import type { MachineShape } from "../shapes/machine-shape";
import { judgeShapedJobs, type QueuedShapedJob } from "../shapes/shaped-jobs";
import type { FlavorMemo } from "./flavor-memo";
import type { MachinePort } from "./ports";
import type { Plan } from "./reconcile";

/**
 * A shaped scale set's pass, before it plans: its queued jobs judged against the bounds and the
 * provider's catalogue (remembered, flavor-memo.ts), the refused ones told why once (their row
 * and a warn line), and the rest handed to the planner by shape.
 */

export interface ShapedDemand {
  /** The servable jobs' shape identities, oldest first: the planner's `queuedShapes`. */
  queuedShapes: string[];
  /** Each servable job's machine, in the same order: a create `forQueued[i]` makes `machines[i]`. */
  machines: MachineShape[];
  /** Jobs within bounds waiting for the provider's catalogue (none fetched yet). */
  awaitingCatalogue: number;
}

/** What the catalogue depends on: a new provider URL or other extra specs (zones, region) asks again at once. */
const catalogueKey = (ss: ScaleSetRecord) => `${ss.provider.name}\n${ss.provider.url}\n${JSON.stringify(ss.extraSpecs)}`;

export async function judgeShapedQueue(input: {
  db: D1Database;
  ss: ScaleSetRecord;
  queue: readonly QueuedShapedJob[];
  memo: FlavorMemo;
  /** Opened only when the catalogue is due (it opens the provider's secret). */
  machines: () => Promise<Pick<MachinePort, "flavors">>;
  now: number;
}): Promise<ShapedDemand> {
  const { ss, now } = input;
  const bounds = ss.shape!;
  const catalogue = input.queue.length
    ? await input.memo.get(catalogueKey(ss), { flavors: async () => (await input.machines()).flavors() }, ss.id, now)
    : null;
  const judged = judgeShapedJobs(input.queue, bounds, catalogue, !ss.jitConfigEnabled);
  await recordRefusals(input.db, judged.refusals, now);
  for (const r of judged.refusals) {
    logger.warn({ event: "job_refused", scale_set: ss.id, job_id: r.jobId, reason: r.problem });
  }
  return {
    queuedShapes: judged.servable.map((s) => s.shape.identity),
    machines: judged.servable.map((s) => s.shape),
    awaitingCatalogue: judged.awaitingCatalogue,
  };
}

/** The plan, saying why jobs within bounds got no machine when the catalogue is missing, and waking when it is asked again. */
export function awaitingFlavors(p: Plan, awaiting: number, retryAt: number | null): Plan {
  if (awaiting === 0) return p;
  const wakeAt = retryAt === null ? p.wakeAt : p.wakeAt === null ? retryAt : Math.min(p.wakeAt, retryAt);
  return { ...p, wakeAt, summary: { ...p.summary, blocked: p.summary.blocked ?? "flavors_unavailable" } };
}
