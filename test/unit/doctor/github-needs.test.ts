import { describe, expect, it } from "vitest";
import { appNeeds, covers, missingPermissions, missingScopes, parseScopes, scopeNeeds } from "../../../src/doctor/github-needs";

describe("what an entity needs of GitHub credentials", () => {
  it("a write grant covers read; read does not cover write; nothing covers nothing", () => {
    expect([covers("write", "read"), covers("admin", "write"), covers("read", "write"), covers(undefined, "read")]).toEqual([
      true,
      true,
      false,
      false,
    ]);
  });

  it("an App needs Administration write for a repository and Self-hosted runners write for an organization", () => {
    const repo = missingPermissions({ actions: "read", administration: "read" }, appNeeds("repository", { appWebhook: false })!);
    expect(repo.map((n) => [n.permission, n.level, n.severity])).toEqual([["administration", "write", "fail"]]);
    const org = missingPermissions({ administration: "write", actions: "read" }, appNeeds("organization", { appWebhook: false })!);
    expect(org.map((n) => n.permission)).toEqual(["organization_self_hosted_runners"]);
  });

  it("Actions read is a warning, and a failure when the App's webhook must subscribe to workflow_job", () => {
    const granted = { administration: "write" };
    expect(missingPermissions(granted, appNeeds("repository", { appWebhook: false })!).map((n) => n.severity)).toEqual(["warn"]);
    expect(missingPermissions(granted, appNeeds("repository", { appWebhook: true })!).map((n) => n.severity)).toEqual(["fail"]);
  });

  it("no App can manage an enterprise's runners", () => {
    expect(appNeeds("enterprise", { appWebhook: false })).toBeNull();
  });

  it("classic PAT scopes: any one of the listed ones will do", () => {
    expect(missingScopes(["repo"], scopeNeeds("repository"))).toEqual([]);
    expect(missingScopes(["public_repo"], scopeNeeds("repository")).map((n) => n.anyOf)).toEqual([["repo"]]);
    expect(missingScopes(["manage_runners:org", "repo"], scopeNeeds("organization"))).toEqual([]);
    expect(missingScopes(["admin:org"], scopeNeeds("organization")).map((n) => n.severity)).toEqual(["warn"]);
    expect(missingScopes(["admin:enterprise"], scopeNeeds("enterprise"))).toEqual([]);
    expect(missingScopes([], scopeNeeds("enterprise")).map((n) => n.anyOf[0])).toEqual(["manage_runners:enterprise"]);
  });

  it("X-OAuth-Scopes: a comma-separated list; absent (fine-grained PAT) is null, empty is no scopes", () => {
    expect(parseScopes("repo, admin:org,  workflow")).toEqual(["repo", "admin:org", "workflow"]);
    expect(parseScopes("")).toEqual([]);
    expect(parseScopes(null)).toBeNull();
  });
});
