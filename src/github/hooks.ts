import type { components } from "@octokit/openapi-types";
import type { HookDelivery } from "./app/app-settings";
import { GithubError } from "./errors";
import type { GithubClient } from "./github-client";
import { type GithubScope, scopePath } from "./scope";

type Hook = components["schemas"]["hook"];

/**
 * A repository or organization webhook as GitHub shows it (GitHub's OpenAPI description; the
 * secret never comes back). Only repository hooks carry last_response.
 */
export type GithubHook = Omit<Hook, "last_response"> & Partial<Pick<Hook, "last_response">>;

export const HOOK_EVENTS = ["workflow_job"];

export type HookScope = Exclude<GithubScope, { kind: "enterprise" }>;

function hooksPath(scope: GithubScope): string {
  if (scope.kind === "enterprise") throw new GithubError("GitHub has no REST API for enterprise webhooks");
  return `${scopePath(scope)}/hooks`;
}

const sameUrl = (a: string | undefined, b: string) => (a ?? "").replace(/\/+$/, "") === b.replace(/\/+$/, "");

/** Our hook: the one whose URL is this coordinator's webhook URL. Others are not ours to touch. */
export async function findHook(gh: GithubClient, scope: HookScope, url: string): Promise<GithubHook | null> {
  const hooks = await gh.paginate("list_hooks", hooksPath(scope), (p: GithubHook[]) => p ?? []);
  return hooks.find((h) => sameUrl(h.config?.url, url)) ?? null;
}

/**
 * Makes sure the scope has our webhook with the current secret: creates it, or updates ours
 * in place (a repeated install re-syncs the secret and events). Returns the hook and whether
 * it was created.
 */
export async function installHook(gh: GithubClient, scope: HookScope, input: { url: string; secret: string; insecureSsl?: boolean }) {
  const config = { url: input.url, content_type: "json", secret: input.secret, insecure_ssl: input.insecureSsl ? "1" : "0" };
  const existing = await findHook(gh, scope, input.url);
  if (existing) {
    const res = await gh.request<GithubHook>("update_hook", "PATCH", `${hooksPath(scope)}/${existing.id}`, {
      body: { config, events: HOOK_EVENTS, active: true },
    });
    return { hook: res.data, created: false };
  }
  const res = await gh.request<GithubHook>("create_hook", "POST", hooksPath(scope), {
    body: { name: "web", config, events: HOOK_EVENTS, active: true },
  });
  return { hook: res.data, created: true };
}

/** Removes our hook, if there is one. Returns the removed hook's id. */
export async function uninstallHook(gh: GithubClient, scope: HookScope, url: string): Promise<number | null> {
  const existing = await findHook(gh, scope, url);
  if (!existing) return null;
  await gh.request("delete_hook", "DELETE", `${hooksPath(scope)}/${existing.id}`, { allow: [404] });
  return existing.id;
}

/** The first page of a hook's recent deliveries (GET …/hooks/{id}/deliveries). */
export async function recentHookDeliveries(gh: GithubClient, scope: HookScope, hookId: number, perPage = 10): Promise<HookDelivery[]> {
  const res = await gh.request<HookDelivery[]>("list_hook_deliveries", "GET", `${hooksPath(scope)}/${hookId}/deliveries`, {
    query: { per_page: perPage },
  });
  return Array.isArray(res.data) ? res.data : [];
}
