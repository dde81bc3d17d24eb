import type { Env } from "../env";
import { logEvent as log } from "../observability/log";
import { acceptWorkflowJob } from "./accept-job";
import { appSigners } from "./app-hooks";
import { loadDirectory } from "./directory";
import { receiveInstallationEvent } from "./installation-events";
import type { IntakeOutcome } from "./outcome";
import { DeliverySubject } from "./payload";
import { deliveryEntities, originOfEndpoint, type SenderEntity } from "./senders";

/**
 * Intake for a delivery GitHub recorded as failed and delivery recovery fetched back (src/recovery/):
 * the payload GitHub sent, read from GitHub's own record with this coordinator's credentials. No
 * signature to check: the payload came from GitHub over an authenticated call, from a hook this
 * coordinator found by its URL (or an App's webhook, asked as the App). Who it speaks for follows
 * the same rule as a signed delivery: the hook's own entity, when the payload names it, or the
 * entities the payload names that act through the App's installation the payload names. Then the
 * same parse, routing and merge as a webhook (accept-job.ts), under the delivery's own GUID, so a
 * delivery taken in either way is taken in once.
 */

/** Which hook GitHub says the delivery went through. */
export type RecoveredVia = { kind: "entity_hook"; entityId: string } | { kind: "app_hook"; appId: number };

export interface RecoveredDelivery {
  guid: string;
  event: string;
  json: unknown;
  endpoint: { name: string; baseUrl: string };
  via: RecoveredVia;
  receivedAt: number;
  retentionDays: number;
}

export async function ingestRecoveredDelivery(
  env: Pick<Env, "DB" | "ENCRYPTION_KEY" | "ENCRYPTION_KEYS_PREVIOUS">,
  d: RecoveredDelivery,
): Promise<IntakeOutcome> {
  const logFields = { recovered: true, via: d.via.kind === "app_hook" ? `app:${d.via.appId}` : `hook:${d.via.entityId}` };
  if (d.event === "installation" || d.event === "installation_repositories") {
    if (d.via.kind !== "app_hook") return { kind: "ignored", reason: `${d.event} comes only through an App's own webhook` };
    const outcome = await receiveInstallationEvent(
      env,
      { id: d.guid, event: d.event, proof: "fetched_as_app", endpointName: d.endpoint.name },
      d.json,
    );
    // Only a signature can be refused, and there is none to check here.
    return outcome.kind === "rejected" ? { kind: "rejected", reason: "bad_signature" } : outcome;
  }
  if (d.event !== "workflow_job") return { kind: "ignored", reason: `event '${d.event}' is not handled` };

  const subject = DeliverySubject.parse(d.json);
  const origin = originOfEndpoint({ ...d.endpoint, forge: "github" });
  const directory = await loadDirectory(env.DB, deliveryEntities(subject), origin, { endpoint: d.endpoint.name });
  let signers: SenderEntity[];
  if (d.via.kind === "entity_hook") {
    const entityId = d.via.entityId;
    signers = directory.entities.filter((e) => e.id === entityId);
  } else {
    const appId = d.via.appId;
    const apps = directory.appHooks.filter((a) => a.appId === appId);
    signers = appSigners(directory.entities, apps, subject.installation?.id ?? null);
  }
  if (!signers.length) {
    log({ event: "webhook_ignored", delivery_id: d.guid, github_event: d.event, ...logFields });
    return { kind: "ignored", reason: "the delivery names no entity registered here that this hook speaks for" };
  }
  return acceptWorkflowJob(env, {
    deliveryId: d.guid,
    json: d.json,
    receivedAt: d.receivedAt,
    retentionDays: d.retentionDays,
    directory,
    signers,
    logFields,
  });
}
