import type { EntityKind } from "../db/directory/schema";
import type { Forge } from "../db/github/schema";
import { DEFAULT_ENDPOINT } from "../github/default-endpoint";
import { entityLookupKey } from "../github/entity-names";
import type { DeliverySubject } from "./payload";
import type { Reporter } from "./routing";

/**
 * Who may have sent a delivery: the entities its payload names, which of the registered ones
 * belong to the delivery's GitHub endpoint, and what routing needs to know about the ones
 * whose secret verified.
 */

export interface EntityRef {
  kind: EntityKind;
  /** Lower-cased, as entities.lookup_key. */
  lookupKey: string;
}

/**
 * The entities a delivery may come from, most specific first: the repository, the
 * organization that owns it, the enterprise it names. The organization is taken from the
 * repository's owner rather than from `organization`, so a payload signed with one
 * repository's secret cannot claim another organization. Keys follow entityLookupKey.
 */
export function deliveryEntities(s: DeliverySubject): EntityRef[] {
  const refs: EntityRef[] = [];
  const add = (kind: EntityKind, owner: string, name?: string) => {
    const lookupKey = entityLookupKey(kind, owner, name);
    if (!refs.some((r) => r.lookupKey === lookupKey)) refs.push({ kind, lookupKey });
  };
  if (s.repository) {
    add("repository", s.repository.owner.login, s.repository.name);
    add("organization", s.repository.owner.login);
  } else if (s.organization) {
    add("organization", s.organization.login);
  }
  if (s.enterprise) add("enterprise", s.enterprise.slug);
  return refs;
}

/** A registered entity a delivery may come from. */
export interface SenderEntity {
  id: string;
  kind: EntityKind;
  lookupKey: string;
  owner: string;
  endpointName: string;
  webhookSecretEnc: string;
  /** The GitHub credentials it acts through (an App's webhook speaks for the entities of its installation). */
  credentialsId: string;
  useParentScaleSets: boolean;
  enterprise: string | null;
}

/**
 * Which endpoint a delivery belongs to: GitHub Enterprise Server names itself in
 * `X-GitHub-Enterprise-Host`, matched against the host of each endpoint's base URL;
 * without it the delivery is from github.com.
 */
export function endpointMatches(endpoint: { name: string; baseUrl: string }, enterpriseHost: string | null): boolean {
  if (!enterpriseHost) return endpoint.name === DEFAULT_ENDPOINT;
  let url: URL;
  try {
    url = new URL(endpoint.baseUrl);
  } catch {
    return false;
  }
  const h = enterpriseHost.trim().toLowerCase();
  return url.host.toLowerCase() === h || url.hostname.toLowerCase() === h;
}

/**
 * Where a delivery comes from, as its route and headers say: GitHub (github.com, or the GitHub
 * Enterprise Server naming itself), or a Gitea instance, known by the host of the repository the
 * payload names (Gitea sends no header naming itself). Each route admits only its own forge's
 * endpoints, so a delivery signed for one forge's entity can never speak for another forge's.
 */
export type DeliveryOrigin = { forge: "github"; enterpriseHost: string | null } | { forge: "gitea"; host: string | null };

/** Whether an endpoint is where a delivery of this origin comes from. */
export function originMatches(endpoint: { name: string; baseUrl: string; forge?: Forge }, origin: DeliveryOrigin): boolean {
  const forge = endpoint.forge ?? "github";
  if (origin.forge === "github") return forge === "github" && endpointMatches(endpoint, origin.enterpriseHost);
  if (forge !== "gitea" || !origin.host) return false;
  try {
    return new URL(endpoint.baseUrl).host.toLowerCase() === origin.host.toLowerCase();
  } catch {
    return false;
  }
}

/**
 * The origin deliveries from an endpoint carry: its forge, and for a GitHub Enterprise Server the
 * host it names itself by (github.com names none). What a delivery fetched back from an endpoint
 * is read as (src/recovery/).
 */
export function originOfEndpoint(endpoint: { name: string; baseUrl: string; forge?: Forge }): DeliveryOrigin {
  let host: string | null = null;
  try {
    host = new URL(endpoint.baseUrl).host;
  } catch {
    host = null;
  }
  if ((endpoint.forge ?? "github") === "gitea") return { forge: "gitea", host };
  return { forge: "github", enterpriseHost: endpointMatches(endpoint, null) ? null : host };
}

/** A short key for caches keyed by origin. */
export const originKey = (o: DeliveryOrigin): string => (o.forge === "github" ? (o.enterpriseHost ?? "") : `gitea:${o.host ?? ""}`);

/**
 * What routing needs to know about an entity that signed a delivery. A repository's
 * organization link comes from the other senders: its organization, when registered, is
 * among the entities the delivery names.
 */
export function reporterOf(signer: SenderEntity, senders: readonly SenderEntity[]): Reporter {
  const organization =
    signer.kind === "repository"
      ? senders.find((e) => e.kind === "organization" && e.owner.toLowerCase() === signer.owner.toLowerCase())
      : undefined;
  return {
    id: signer.id,
    kind: signer.kind,
    owner: signer.owner,
    useParentScaleSets: signer.useParentScaleSets,
    enterprise: signer.enterprise,
    organizationEnterprise: organization?.enterprise ?? null,
  };
}
