import {
  getAppHookConfig,
  getInstallation,
  type HookDelivery,
  newestDelivery,
  recentAppHookDeliveries,
} from "../../github/app/app-settings";
import type { GithubClient } from "../../github/github-client";
import { findHook, type HookScope, recentHookDeliveries } from "../../github/hooks";
import { type GithubScope, scopePath } from "../../github/scope";
import type { AppHookFacts, DeliveryFacts, EntityHookFacts, InstallationFacts, Probe } from "../facts";
import { parseScopes } from "../github-needs";
import { probe } from "./probe";

/**
 * The setup check's GitHub calls, each a harmless read: at most one per credential for an
 * App's installation, two for its webhook, and per entity one for its runners and two for its
 * hook. Nothing here writes to GitHub.
 */

const deliveryFacts = (d: HookDelivery | null): DeliveryFacts | null =>
  d && { at: d.delivered_at, statusCode: d.status_code, status: d.status, event: d.event };

export function probeInstallation(gh: GithubClient, installationId: number, deadline: number): Promise<Probe<InstallationFacts>> {
  return probe(deadline, async () => {
    const inst = await getInstallation(gh, installationId);
    const account = inst.account as { login?: string; slug?: string; type?: string } | null;
    return {
      account: account?.login ?? account?.slug ?? null,
      accountType: account?.type ?? (account?.slug ? "Enterprise" : null),
      permissions: { ...(inst.permissions as Record<string, string>) },
      events: inst.events ?? [],
      repositorySelection: inst.repository_selection ?? null,
      suspended: inst.suspended_at != null,
    };
  });
}

export async function probeAppHook(gh: GithubClient, deadline: number): Promise<AppHookFacts> {
  const [config, lastDelivery] = await Promise.all([
    probe(deadline, async () => {
      const c = await getAppHookConfig(gh);
      return { url: c.url || null, contentType: c.content_type ?? null };
    }),
    probe(deadline, async () => deliveryFacts(newestDelivery(await recentAppHookDeliveries(gh)))),
  ]);
  return { config, lastDelivery };
}

/** One runner of the scope (per_page=1): may these credentials see its runners? And a classic PAT's scopes. */
export function probeRunners(gh: GithubClient, scope: GithubScope, deadline: number): Promise<Probe<{ scopes: string[] | null }>> {
  return probe(deadline, async () => {
    const res = await gh.request("doctor_list_runners", "GET", `${scopePath(scope)}/actions/runners`, { query: { per_page: 1 } });
    return { scopes: parseScopes(res.headers.get("x-oauth-scopes")) };
  });
}

/** The scope's hook whose URL is ours, and its newest delivery. */
export async function probeEntityHook(gh: GithubClient, scope: HookScope, webhookUrl: string, deadline: number): Promise<EntityHookFacts> {
  const hook = await probe(deadline, async () => {
    const h = await findHook(gh, scope, webhookUrl);
    return h && { id: h.id, active: h.active, events: h.events ?? [], contentType: h.config?.content_type ?? null };
  });
  if (!hook.ok || hook.value === null) return { hook, lastDelivery: null };
  const id = hook.value.id;
  const lastDelivery = await probe(deadline, async () => deliveryFacts(newestDelivery(await recentHookDeliveries(gh, scope, id))));
  return { hook, lastDelivery };
}
