import { loadRecoveryInputs, readRecoveryDigest } from "../db/recovery/recovery-store";
import type { Env } from "../env";
import { servedEntities } from "./served";
import { recoverySettings } from "./settings";
import { watchList } from "./watch-list";

/**
 * What delivery recovery has learned, as people are shown it (GET /recovery, the setup check):
 * for each entity whose jobs can start a runner here, the ways its lost deliveries are found, each
 * with the last status of its watch, and the last day's figures; when the last pass ran. Two D1
 * round trips, no call to GitHub.
 */

export interface RecoveryMeansView {
  kind: "repository" | "organization" | "app" | "backstop";
  watch: string;
  /** `ok`, or what the last look found; null: not looked at yet. */
  status: string | null;
  detail: string | null;
  since: number | null;
  /** The backstop: why it looks instead of a hook. */
  reason?: string;
}

export interface RecoveryView {
  intervalMs: number;
  lastPass: { at: number; durationMs: number; calls: number; watches: number } | null;
  /** Every entity; null for one no webhook scale set serves. */
  byEntity: Map<
    string,
    { entity: string; means: RecoveryMeansView[]; last24h: { failed: number; recovered: number; found: number } } | null
  >;
}

const DAY_MS = 86_400_000;

export async function readRecoveryView(
  env: Pick<Env, "DB" | "DELIVERY_RECOVERY_SECONDS" | "DELIVERY_RETENTION_DAYS" | "RETENTION_DAYS">,
  now: number,
): Promise<RecoveryView> {
  const [inputs, digest] = await Promise.all([loadRecoveryInputs(env.DB), readRecoveryDigest(env.DB, now - DAY_MS)]);
  const rows = new Map(inputs.watches.map((w) => [w.key, w]));
  const list = watchList(
    servedEntities(inputs.entities),
    new Map(inputs.watches.map((w) => [w.key, { status: w.status, detail: w.detail }])),
  );
  const byEntity: RecoveryView["byEntity"] = new Map(inputs.entities.map((e) => [e.id, null]));
  const names = new Map(inputs.entities.map((e) => [e.id, `${e.kind} ${e.kind === "repository" ? `${e.owner}/${e.name}` : e.owner}`]));
  for (const r of list.recovery) {
    byEntity.set(r.entityId, {
      entity: names.get(r.entityId) ?? r.entityId,
      means: r.means.map((m) => {
        const row = rows.get(m.watch);
        return {
          kind: m.kind,
          watch: m.watch,
          status: row?.status ?? null,
          detail: row?.detail ?? null,
          since: row?.statusSince ?? null,
          ...(m.reason !== undefined && { reason: m.reason }),
        };
      }),
      last24h: digest.byEntity.get(r.entityId) ?? { failed: 0, recovered: 0, found: 0 },
    });
  }
  return { intervalMs: recoverySettings(env).intervalMs, lastPass: digest.lastPass, byEntity };
}
