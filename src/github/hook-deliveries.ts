import type { components } from "@octokit/openapi-types";
import type { GithubClient, GithubResponse } from "./github-client";
import type { HookScope } from "./hooks";
import { scopePath } from "./scope";

/**
 * GitHub's record of a webhook's deliveries (REST: "Webhook deliveries"), for an App's own webhook
 * (asked as the App, with its JWT) or a repository's or organization's hook (asked with the
 * credential's token). GitHub makes one attempt per delivery and never retries by itself; this
 * is how a failed one is found and its payload fetched back. Shapes from GitHub's OpenAPI description.
 */

export type DeliveryListItem = components["schemas"]["hook-delivery-item"];
export type DeliveryDetail = components["schemas"]["hook-delivery"];

/** Whose deliveries: an App's own webhook, or a hook of a repository or organization. */
export type DeliverySource = { kind: "app" } | { kind: "hook"; scope: HookScope; hookId: number };

const base = (s: DeliverySource) => (s.kind === "app" ? "/app/hook/deliveries" : `${scopePath(s.scope)}/hooks/${s.hookId}/deliveries`);

function call<T>(
  gh: GithubClient,
  s: DeliverySource,
  operation: string,
  method: string,
  path: string,
  query?: Record<string, string | number>,
) {
  return s.kind === "app" ? gh.requestAsApp<T>(operation, method, path, { query }) : gh.request<T>(operation, method, path, { query });
}

/** The `cursor` of a `Link: rel="next"` URL (GitHub pages deliveries by cursor, not by page number). */
export function nextCursor(link: string | null): string | null {
  if (!link) return null;
  for (const part of link.split(",")) {
    const m = /<([^>]+)>\s*;\s*rel="?next"?/.exec(part.trim());
    if (!m) continue;
    try {
      return new URL(m[1]!).searchParams.get("cursor");
    } catch {
      return null;
    }
  }
  return null;
}

/**
 * One page of the deliveries, newest first, and the cursor of the next page (null on the last).
 * Unfiltered: GitHub's `status=failure` covers answers 400–599 only (its OpenAPI description), not
 * a delivery that got no answer at all (timed out, no connection), which is the one most worth
 * finding; GitHub's own recovery example lists every delivery and keeps those not "OK".
 */
export async function listDeliveries(
  gh: GithubClient,
  source: DeliverySource,
  page: { perPage: number; cursor?: string | null },
): Promise<{ items: DeliveryListItem[]; next: string | null }> {
  const res: GithubResponse<DeliveryListItem[]> = await call(gh, source, listOperation(source), "GET", base(source), {
    per_page: page.perPage,
    ...(page.cursor ? { cursor: page.cursor } : {}),
  });
  return { items: Array.isArray(res.data) ? res.data : [], next: nextCursor(res.headers.get("link")) };
}

const listOperation = (s: DeliverySource) => (s.kind === "app" ? "list_app_hook_deliveries" : "list_hook_deliveries");

/** One delivery with the request GitHub sent: its headers and payload. */
export async function getDelivery(gh: GithubClient, source: DeliverySource, deliveryId: number): Promise<DeliveryDetail> {
  const op = source.kind === "app" ? "get_app_hook_delivery" : "get_hook_delivery";
  return (await call<DeliveryDetail>(gh, source, op, "GET", `${base(source)}/${deliveryId}`)).data;
}
