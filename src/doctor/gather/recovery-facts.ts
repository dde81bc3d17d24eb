import { loadRecoveryInputs, readRecoveryDigest } from "../../db/recovery/recovery-store";
import type { Env } from "../../env";
import { servedEntities } from "../../recovery/served";
import { recoverySettings } from "../../recovery/settings";
import { watchList } from "../../recovery/watch-list";
import type { EntityRecoveryFacts, RecoveryFacts } from "../facts";

const DAY_MS = 86_400_000;

/**
 * How each entity's lost deliveries are found, from what the recovery object learned (D1): the
 * same watch list it works from, each watch with its last status, and the last day's figures.
 * Two D1 round trips, no call to GitHub.
 */
export async function gatherRecovery(
  env: Pick<Env, "DB" | "DELIVERY_RECOVERY_SECONDS" | "DELIVERY_RETENTION_DAYS" | "RETENTION_DAYS">,
  now: number,
): Promise<{ recovery: RecoveryFacts; byEntity: Map<string, EntityRecoveryFacts | null> }> {
  const [inputs, digest] = await Promise.all([loadRecoveryInputs(env.DB), readRecoveryDigest(env.DB, now - DAY_MS)]);
  const rows = new Map(inputs.watches.map((w) => [w.key, w]));
  const list = watchList(
    servedEntities(inputs.entities),
    new Map(inputs.watches.map((w) => [w.key, { status: w.status, detail: w.detail }])),
  );
  const byEntity = new Map<string, EntityRecoveryFacts | null>(inputs.entities.map((e) => [e.id, null]));
  for (const r of list.recovery) {
    byEntity.set(r.entityId, {
      means: r.means.map((m) => {
        const row = rows.get(m.watch);
        return {
          kind: m.kind,
          status: row?.status ?? null,
          detail: row?.detail ?? null,
          since: row?.statusSince ?? null,
          ...(m.reason !== undefined && { reason: m.reason }),
        };
      }),
      last24h: digest.byEntity.get(r.entityId) ?? { failed: 0, recovered: 0, found: 0 },
    });
  }
  return { recovery: { intervalMs: recoverySettings(env).intervalMs, lastPassAt: digest.lastPass?.at ?? null }, byEntity };
}
