import type { GithubClient } from "../../github/github-client";
import { type GiteaScope, giteaScopePath } from "./gitea-scope";

/**
 * This coordinator's webhook on a Gitea repository, organization or instance (a system hook,
 * `/admin/hooks`), through Gitea's hook API (`CreateHookOption`, `EditHookOption`, `Hook` in its
 * swagger): type `gitea`, JSON, the workflow_job event, the entity's webhook secret. Gitea never
 * returns the secret; a repeated install updates our hook in place.
 */

/** A hook as Gitea shows it (`Hook`): the fields we read. */
export interface GiteaHook {
  id: number;
  type?: string;
  active: boolean;
  events?: string[] | null;
  config?: Record<string, string> | null;
  created_at?: string | null;
  updated_at?: string | null;
}

export const GITEA_HOOK_EVENTS = ["workflow_job"];

const sameUrl = (a: string | undefined, b: string) => (a ?? "").replace(/\/+$/, "") === b.replace(/\/+$/, "");
const hooksPath = (scope: GiteaScope) => `${giteaScopePath(scope)}/hooks`;

/** Gitea pages hooks with page and limit. */
const PAGE_SIZE = 50;

/** Our hook: the one whose URL is this coordinator's Gitea webhook URL. Others are not ours to touch. */
export async function findGiteaHook(gh: GithubClient, scope: GiteaScope, url: string): Promise<GiteaHook | null> {
  for (let page = 1; page <= 20; page++) {
    const res = await gh.request<GiteaHook[] | null>("list_hooks", "GET", hooksPath(scope), { query: { page, limit: PAGE_SIZE } });
    const hooks = Array.isArray(res.data) ? res.data : [];
    const ours = hooks.find((h) => sameUrl(h.config?.url, url));
    if (ours) return ours;
    if (hooks.length < PAGE_SIZE) break;
  }
  return null;
}

/** Creates our hook, or brings it up to date (secret, events, active). Returns it and whether it was created. */
export async function installGiteaHook(
  gh: GithubClient,
  scope: GiteaScope,
  input: { url: string; secret: string },
): Promise<{ hook: GiteaHook; created: boolean }> {
  const config: Record<string, string> = { url: input.url, content_type: "json", http_method: "post", secret: input.secret };
  // An instance's hook is a system hook: it sees every repository's events.
  if (scope.kind === "instance") config.is_system_webhook = "true";
  const existing = await findGiteaHook(gh, scope, input.url);
  if (existing) {
    const res = await gh.request<GiteaHook>("update_hook", "PATCH", `${hooksPath(scope)}/${existing.id}`, {
      body: { config, events: GITEA_HOOK_EVENTS, active: true },
    });
    return { hook: res.data, created: false };
  }
  const res = await gh.request<GiteaHook>("create_hook", "POST", hooksPath(scope), {
    body: { type: "gitea", config, events: GITEA_HOOK_EVENTS, active: true, branch_filter: "*" },
  });
  return { hook: res.data, created: true };
}

/** Removes our hook, if there is one. Returns the removed hook's id. */
export async function uninstallGiteaHook(gh: GithubClient, scope: GiteaScope, url: string): Promise<number | null> {
  const existing = await findGiteaHook(gh, scope, url);
  if (!existing) return null;
  await gh.request("delete_hook", "DELETE", `${hooksPath(scope)}/${existing.id}`, { allow: [404] });
  return existing.id;
}
