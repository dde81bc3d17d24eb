import type { RecoveryEntityRow } from "../db/recovery/recovery-store";
import type { WatchedEntity } from "./watch-list";

/**
 * The entities recovery looks after: those whose jobs can start a runner here, through an enabled
 * webhook scale set of their own or, when registered to use them, of their organization or
 * enterprise (routing.ts inScope). An entity whose lost jobs would start nothing costs no calls.
 */
export function servedEntities(rows: readonly RecoveryEntityRow[]): WatchedEntity[] {
  const lc = (s: string | null) => (s ?? "").toLowerCase();
  const withSets = rows.filter((r) => r.ownScaleSets);
  const hasSets = (kind: string, owner: string | null, endpoint: string) =>
    withSets.some((p) => p.kind === kind && lc(p.owner) === lc(owner) && p.endpointName === endpoint);
  return rows.map((r) => {
    const parent =
      r.useParentScaleSets &&
      ((r.kind === "repository" && hasSets("organization", r.owner, r.endpointName)) ||
        (r.enterprise !== null && hasSets("enterprise", r.enterprise, r.endpointName)));
    return {
      id: r.id,
      kind: r.kind,
      owner: r.owner,
      name: r.name,
      endpointName: r.endpointName,
      forge: r.forge,
      credentialsId: r.credentialsId,
      appWebhook: r.appId === null ? null : { appId: r.appId },
      served: r.ownScaleSets || Boolean(parent),
    };
  });
}
