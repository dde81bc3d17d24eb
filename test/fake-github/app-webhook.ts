/**
 * A GitHub App's own webhook, as the fake plays it: one webhook for every installation of the
 * App, signed with the App's webhook secret. A delivery carries the `installation` object
 * (`{id, node_id}`, as in GitHub's App-level example payloads) and names the App in
 * `X-GitHub-Hook-Installation-Target-Type: integration` / `-Target-ID: <app id>`. An
 * installation covers its account's repositories; the App hears nothing of the others.
 */
import type { World } from "./world.ts";

export interface AppWebhookDelivery {
  installation: { id: number; node_id: string };
  headers: Record<string, string>;
}

/** What the App's webhook adds to a delivery about `repository` (`owner/name`), or null when no installation of the App covers it. */
export function appWebhookDelivery(world: World, appId: number, repository: string): AppWebhookDelivery | null {
  const owner = repository.split("/")[0]!.toLowerCase();
  const installation = [...world.installations.values()].find((i) => i.appId === appId && i.account === owner);
  if (!installation) return null;
  return {
    // GitHub's node ids for installations are base64 of "023:IntegrationInstallation<id>".
    installation: { id: installation.id, node_id: Buffer.from(`023:IntegrationInstallation${installation.id}`).toString("base64") },
    headers: { "x-github-hook-installation-target-type": "integration", "x-github-hook-installation-target-id": String(appId) },
  };
}
