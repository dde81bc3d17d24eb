import { listWaitingJobs } from "../../forges/forgejo/forgejo-api";
import { forgejoScopeOf } from "../../forges/forgejo/forgejo-shapes";
import { findGiteaHook } from "../../forges/gitea/gitea-hooks";
import { giteaScopeOf, giteaScopePath } from "../../forges/gitea/gitea-scope";
import type { GithubClient } from "../../github/github-client";
import type { EntityHookFacts, Probe } from "../facts";
import { probe } from "./probe";

/**
 * The setup check's calls to Gitea and Forgejo, each a harmless read with the entity's token:
 * Gitea's runner list of the scope (one, limit=1) and its hook whose URL is ours; Forgejo's
 * waiting jobs of the scope, the very list its scale sets poll. Each proves the token works and
 * reaches the scope; neither forge tells a token's scopes in a header, so `scopes` is null.
 */

type EntityRef = { kind: "repository" | "organization" | "enterprise"; owner: string; name: string };

export function probeGiteaRunners(gh: GithubClient, entity: EntityRef, deadline: number): Promise<Probe<{ scopes: null }>> {
  return probe(deadline, async () => {
    await gh.request("doctor_list_runners", "GET", `${giteaScopePath(giteaScopeOf(entity))}/actions/runners`, {
      query: { page: 1, limit: 1 },
    });
    return { scopes: null };
  });
}

/** Our hook at Gitea (a system hook for the instance). Its deliveries are not read: the last job's time stands for them. */
export async function probeGiteaHook(gh: GithubClient, entity: EntityRef, webhookUrl: string, deadline: number): Promise<EntityHookFacts> {
  const hook = await probe(deadline, async () => {
    const h = await findGiteaHook(gh, giteaScopeOf(entity), webhookUrl);
    return h && { id: h.id, active: h.active, events: h.events ?? [], contentType: h.config?.content_type ?? null };
  });
  return { hook, lastDelivery: null };
}

export function probeForgejoJobs(gh: GithubClient, entity: EntityRef, deadline: number): Promise<Probe<{ scopes: null }>> {
  return probe(deadline, async () => {
    await listWaitingJobs(gh, forgejoScopeOf(entity));
    return { scopes: null };
  });
}
