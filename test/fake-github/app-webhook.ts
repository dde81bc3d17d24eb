/**
 * A GitHub App's own webhook, as the fake plays it: one webhook for every installation of the
 * App, signed with the App's webhook secret. A delivery carries the `installation` object
 * (`{id, node_id}`, as in GitHub's App-level example payloads) and names the App in
 * `X-GitHub-Hook-Installation-Target-Type: integration` / `-Target-ID: <app id>` (and, for an
 * App made through the manifest flow, its webhook's `X-GitHub-Hook-ID`). An installation covers
 * its account's repositories, or with `selected` the ones chosen; the App hears nothing of the others.
 */
import { covers, registryOf } from "./apps/registry.ts";
import { installationNodeId } from "./apps/rest.ts";
import type { World } from "./world.ts";

export interface AppWebhookDelivery {
  installation: { id: number; node_id: string };
  headers: Record<string, string>;
}

/** What the App's webhook adds to a delivery about `repository` (`owner/name`), or null when no installation of the App covers it. */
export function appWebhookDelivery(world: World, appId: number, repository: string): AppWebhookDelivery | null {
  const repo = repository.toLowerCase();
  const installation = [...world.installations.values()].find((i) => i.appId === appId && covers(i, repo));
  if (!installation) return null;
  return { installation: { id: installation.id, node_id: installationNodeId(installation.id) }, headers: appHookHeaders(world, appId) };
}

/** The headers naming the App's webhook as the target of a delivery. */
export function appHookHeaders(world: World, appId: number): Record<string, string> {
  const hookId = registryOf(world).apps.get(appId)?.hook_id;
  return {
    ...(hookId !== undefined && { "x-github-hook-id": String(hookId) }),
    "x-github-hook-installation-target-type": "integration",
    "x-github-hook-installation-target-id": String(appId),
  };
}
