import type { EndpointRow } from "../db/recovery/recovery-store";
import { giteaBackstopPort } from "../forges/gitea/gitea-backstop";
import type { GithubClient } from "../github/github-client";
import { type BackstopPort, githubBackstopPort } from "./backstop-port";
import { isEnterpriseServer } from "./settings";
import type { CallBudget } from "./watch-status";

/** The backstop's calls for an endpoint's forge. */
export function forgeBackstopPort(endpoint: EndpointRow, gh: GithubClient, budget: CallBudget, credentialId: string): BackstopPort {
  if (endpoint.forge === "gitea") return giteaBackstopPort(gh, budget, credentialId);
  return githubBackstopPort(gh, budget, credentialId, isEnterpriseServer(endpoint.apiBaseUrl));
}
