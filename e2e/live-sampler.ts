/**
 * Samples a scenario's live instances all along (D1 through the coordinator's API, and the
 * cloud's machines), keeping each scale set's largest count and every time one went over its
 * max_runners: the invariant e2e/scenario-runner.ts, e2e/forges.ts and e2e/shapes.ts check.
 */
import { sleep } from "../bench/harness.mjs";

export interface LiveSampler {
  /** Per scale set id: the most live instances seen in D1 and in the cloud. */
  maxLive: Map<string, { d1: number; machines: number }>;
  /** "name: N live > max_runners M", once each. */
  violations: Set<string>;
  samples(): number;
  /** Stops sampling and waits for the last sample. */
  stop(): Promise<void>;
}

export function sampleLive(
  ids: Map<string, { name: string; max: number }>,
  instances: () => Promise<{ scale_set_id: string; status: string }[]>,
  machines: () => Promise<{ pool_id: string }[]>,
): LiveSampler {
  const maxLive = new Map<string, { d1: number; machines: number }>([...ids.keys()].map((id) => [id, { d1: 0, machines: 0 }]));
  const violations = new Set<string>();
  let samples = 0;
  let on = true;
  const loop = (async () => {
    while (on) {
      const [rows, live] = await Promise.all([instances().catch(() => null), machines().catch(() => null)]);
      for (const [id, spec] of ids) {
        const m = maxLive.get(id)!;
        if (rows) m.d1 = Math.max(m.d1, rows.filter((r) => r.scale_set_id === id && r.status !== "deleted").length);
        if (live) m.machines = Math.max(m.machines, live.filter((x) => x.pool_id === id).length);
        if (m.d1 > spec.max || m.machines > spec.max)
          violations.add(`${spec.name}: ${Math.max(m.d1, m.machines)} live > max_runners ${spec.max}`);
      }
      if (rows || live) samples++;
      await sleep(150);
    }
  })();
  return {
    maxLive,
    violations,
    samples: () => samples,
    async stop() {
      on = false;
      await loop.catch(() => {});
    },
  };
}
