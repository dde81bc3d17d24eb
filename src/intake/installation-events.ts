import { keyringFor } from "../crypto/keyring";
import { secretContext } from "../crypto/secret-contexts";
import { createDb } from "../db/client";
import { findAppByAppId, findInstallation, installationRecord } from "../db/github/github-app-store";
import type { Forge } from "../db/github/schema";
import type { Env } from "../env";
import { logEvent } from "../observability/log";
import { applyInstallationEvent, InstallationPayload } from "../setup/installations";
import { recordInstallation } from "../setup/record-installation";
import { originMatches } from "./senders";
import { findSigners } from "./signature";

/**
 * `installation` and `installation_repositories` deliveries to the webhook of an App this
 * coordinator created (the first-run page): where the App was installed, and which repositories
 * it covers. Verified with the App's own webhook secret (no credentials exist for a new
 * installation yet), they record the installation and make its credentials; the page then
 * offers its organization and repositories as entities to add. Deliveries about Apps made
 * elsewhere are ignored unread, as before.
 */

export type InstallationOutcome =
  | { kind: "ignored"; reason: string }
  | { kind: "rejected" }
  | { kind: "installation"; appId: number; installationId: number; status: string };

/** The endpoint a delivery came from: github.com, or the GHES that names itself in X-GitHub-Enterprise-Host. */
export function endpointOfDelivery(
  endpoints: readonly { name: string; baseUrl: string; forge?: Forge }[],
  enterpriseHost: string | null,
): string | null {
  return endpoints.find((e) => originMatches(e, { forge: "github", enterpriseHost }))?.name ?? null;
}

export async function receiveInstallationEvent(
  env: Pick<Env, "DB" | "ENCRYPTION_KEY" | "ENCRYPTION_KEYS_PREVIOUS">,
  delivery: {
    id: string;
    event: string;
    /**
     * What makes it authentic: the App's webhook secret's signature over the body, or that delivery
     * recovery fetched it from GitHub as the App itself (src/recovery/).
     */
    proof: { signature: string; body: Uint8Array } | "fetched_as_app";
    endpointName: string | null;
  },
  json: unknown,
): Promise<InstallationOutcome> {
  const parsed = InstallationPayload.safeParse(json);
  if (!parsed.success || !delivery.endpointName) {
    return { kind: "ignored", reason: `event '${delivery.event}' is not about an App this coordinator created` };
  }
  const p = parsed.data;
  const db = createDb(env);
  const app = await findAppByAppId(db, delivery.endpointName, p.installation.app_id);
  if (!app) {
    logEvent({ event: "webhook_ignored", delivery_id: delivery.id, github_event: delivery.event, app_id: p.installation.app_id });
    return { kind: "ignored", reason: `event '${delivery.event}' is not about an App this coordinator created` };
  }
  if (delivery.proof !== "fetched_as_app") {
    const keyring = await keyringFor(env);
    const signers = await findSigners(
      keyring,
      [{ id: app.id, webhookSecretEnc: app.webhookSecretEnc }],
      delivery.proof.body,
      delivery.proof.signature,
      (a) => secretContext.appOwnWebhookSecret(a.id),
    );
    if (!signers.length) return { kind: "rejected" };
  }

  const current = await findInstallation(db, app.id, p.installation.id);
  const next = applyInstallationEvent(current && installationRecord(current), delivery.event, p);
  if (!next) {
    logEvent({ event: "webhook_ignored", delivery_id: delivery.id, github_event: delivery.event, action: p.action });
    return { kind: "ignored", reason: `${delivery.event} '${p.action}' changes nothing here` };
  }
  await recordInstallation(env, app, next);
  return { kind: "installation", appId: app.appId, installationId: next.installationId, status: next.status };
}
