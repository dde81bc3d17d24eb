import type { components } from "@octokit/openapi-types";
import type { GithubClient } from "../github-client";

/**
 * What GitHub says of a GitHub App, asked as the App itself (its JWT): one installation (the
 * permissions and events its owner accepted, the account it is on), and the App's own webhook
 * (where it delivers, and how its recent deliveries went). Shapes from GitHub's OpenAPI description.
 */

type Schemas = components["schemas"];
export type Installation = Schemas["installation"];
export type WebhookConfig = Schemas["webhook-config"];
export type HookDelivery = Schemas["hook-delivery-item"];

/** GET /app/installations/{id}. */
export async function getInstallation(gh: GithubClient, installationId: number): Promise<Installation> {
  const res = await gh.requestAsApp<Installation>("get_installation", "GET", `/app/installations/${installationId}`);
  return res.data;
}

/** GET /app/hook/config: the App's webhook URL and content type (its secret comes back masked, and is never kept). */
export async function getAppHookConfig(gh: GithubClient): Promise<WebhookConfig> {
  const res = await gh.requestAsApp<WebhookConfig>("get_app_hook_config", "GET", "/app/hook/config");
  return res.data ?? {};
}

/** GET /app/hook/deliveries: the first page of the App's recent deliveries. */
export async function recentAppHookDeliveries(gh: GithubClient, perPage = 10): Promise<HookDelivery[]> {
  const res = await gh.requestAsApp<HookDelivery[]>("list_app_hook_deliveries", "GET", "/app/hook/deliveries", {
    query: { per_page: perPage },
  });
  return Array.isArray(res.data) ? res.data : [];
}

/** The newest of some deliveries (GitHub lists the newest first; this does not rely on it). */
export function newestDelivery(deliveries: HookDelivery[]): HookDelivery | null {
  let newest: HookDelivery | null = null;
  for (const d of deliveries) if (!newest || Date.parse(d.delivered_at) > Date.parse(newest.delivered_at)) newest = d;
  return newest;
}
