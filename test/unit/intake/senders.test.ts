import { describe, expect, it } from "vitest";
import { DeliverySubject } from "../../../src/intake/payload";
import { deliveryEntities, endpointMatches, reporterOf, type SenderEntity } from "../../../src/intake/senders";
import { clone, exampleFor, pingExamples } from "../../fixtures/webhook-examples";

describe("deliveryEntities", () => {
  it("names the repository, its owner as organization, and the enterprise, lower-cased", () => {
    const p = clone(exampleFor("in_progress", 2832853555).payload);
    p.enterprise = { slug: "Octo-Corp" };
    expect(deliveryEntities(DeliverySubject.parse(p))).toEqual([
      { kind: "repository", lookupKey: "repository:octo-org/example-workflow" },
      { kind: "organization", lookupKey: "organization:octo-org" },
      { kind: "enterprise", lookupKey: "enterprise:octo-corp" },
    ]);
  });

  it("takes the organization from the repository's owner, not from what the payload claims", () => {
    const p = clone(exampleFor("in_progress", 2832853555).payload);
    p.organization = { login: "someone-else" };
    expect(deliveryEntities(DeliverySubject.parse(p)).map((r) => r.lookupKey)).toEqual([
      "repository:octo-org/example-workflow",
      "organization:octo-org",
    ]);
  });

  it("uses the organization of a delivery without a repository (an organization's ping)", () => {
    const p = clone(pingExamples[0]!.payload);
    delete p.repository;
    p.organization = { login: "Octo-Org" };
    expect(deliveryEntities(DeliverySubject.parse(p))).toEqual([{ kind: "organization", lookupKey: "organization:octo-org" }]);
  });

  it("names nothing for a payload that names nothing", () => {
    expect(deliveryEntities(DeliverySubject.parse({ repository: 5, organization: "x" }))).toEqual([]);
  });
});

describe("endpointMatches", () => {
  const ghes = { name: "corp", baseUrl: "https://GHES.corp.example:8443" };
  const dotcom = { name: "github.com", baseUrl: "https://github.com" };
  it("takes deliveries without X-GitHub-Enterprise-Host as github.com's", () => {
    expect(endpointMatches(dotcom, null)).toBe(true);
    expect(endpointMatches(ghes, null)).toBe(false);
  });
  it("matches GHES by the host of the endpoint's base URL, with or without port, in any case", () => {
    expect(endpointMatches(ghes, "ghes.corp.example")).toBe(true);
    expect(endpointMatches(ghes, "GHES.corp.example:8443")).toBe(true);
    expect(endpointMatches(ghes, "other.example")).toBe(false);
    expect(endpointMatches(dotcom, "ghes.corp.example")).toBe(false);
  });
});

describe("reporterOf", () => {
  const sender = (kind: SenderEntity["kind"], owner: string, over: Partial<SenderEntity> = {}): SenderEntity => ({
    id: `${kind}-${owner}`,
    kind,
    lookupKey: `${kind}:${owner.toLowerCase()}`,
    owner,
    endpointName: "github.com",
    webhookSecretEnc: "sealed",
    credentialsId: "creds",
    useParentScaleSets: false,
    enterprise: null,
    ...over,
  });

  it("gives a repository its registered organization's enterprise link, matching the owner in any case", () => {
    const repo = sender("repository", "Octo-Org", { useParentScaleSets: true });
    const org = sender("organization", "octo-org", { enterprise: "octo-corp" });
    expect(reporterOf(repo, [repo, org])).toEqual({
      id: repo.id,
      kind: "repository",
      owner: "Octo-Org",
      useParentScaleSets: true,
      enterprise: null,
      organizationEnterprise: "octo-corp",
    });
  });

  it("links nothing when the repository's organization is not among the senders", () => {
    const repo = sender("repository", "octo-org", { enterprise: "own-ent" });
    const other = sender("organization", "someone-else", { enterprise: "octo-corp" });
    expect(reporterOf(repo, [repo, other])).toMatchObject({ enterprise: "own-ent", organizationEnterprise: null });
  });

  it("takes no organization link for an organization", () => {
    const org = sender("organization", "octo-org", { enterprise: "octo-corp" });
    expect(reporterOf(org, [org])).toMatchObject({ kind: "organization", enterprise: "octo-corp", organizationEnterprise: null });
  });
});
