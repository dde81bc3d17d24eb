import type { Env } from "../../env";
import { readRecoveryView } from "../../recovery/recovery-view";
import type { EntityRecoveryFacts, RecoveryFacts } from "../facts";

/** How each entity's lost deliveries are found, from what the recovery object learned (D1; recovery-view.ts). */
export async function gatherRecovery(
  env: Pick<Env, "DB" | "DELIVERY_RECOVERY_SECONDS" | "DELIVERY_RETENTION_DAYS" | "RETENTION_DAYS">,
  now: number,
): Promise<{ recovery: RecoveryFacts; byEntity: Map<string, EntityRecoveryFacts | null> }> {
  const view = await readRecoveryView(env, now);
  const byEntity = new Map<string, EntityRecoveryFacts | null>();
  for (const [id, e] of view.byEntity) {
    byEntity.set(id, e && { means: e.means.map(({ watch: _, ...m }) => m), last24h: e.last24h });
  }
  return { recovery: { intervalMs: view.intervalMs, lastPassAt: view.lastPass?.at ?? null }, byEntity };
}
