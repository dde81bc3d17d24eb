import { describe, expect, it } from "vitest";
import {
  APP_NAME_MAX,
  buildAppManifest,
  defaultAppName,
  installUrl,
  manifestPostUrl,
  permissionsNeeded,
  unreachableByGithub,
} from "../../../src/setup/app-manifest";

describe("the App manifest", () => {
  it("asks for exactly what the chosen runners need, with the webhook and our return URLs", () => {
    const m = buildAppManifest({
      publicUrl: "https://edgerunner.example.workers.dev/",
      name: "Edgerunner example",
      features: { repositoryRunners: true, organizationRunners: false },
    });
    expect(m).toEqual({
      name: "Edgerunner example",
      url: "https://edgerunner.example.workers.dev",
      description: expect.stringContaining("https://edgerunner.example.workers.dev"),
      hook_attributes: { url: "https://edgerunner.example.workers.dev/webhooks/github", active: true },
      redirect_url: "https://edgerunner.example.workers.dev/ui/setup/app-created",
      setup_url: "https://edgerunner.example.workers.dev/ui/setup/installed",
      setup_on_update: true,
      public: false,
      default_permissions: { actions: "read", metadata: "read", administration: "write" },
      default_events: ["workflow_job"],
    });
  });

  it("organization runners need the organization's self-hosted runners permission, not administration", () => {
    const org = permissionsNeeded({ repositoryRunners: false, organizationRunners: true });
    expect(org.map((p) => `${p.permission}:${p.level}`)).toEqual([
      "actions:read",
      "metadata:read",
      "organization_self_hosted_runners:write",
    ]);
    for (const p of org) expect(p.why.length).toBeGreaterThan(10);
    const both = permissionsNeeded({ repositoryRunners: true, organizationRunners: true }).map((p) => p.permission);
    expect(both).toEqual(["actions", "metadata", "administration", "organization_self_hosted_runners"]);
  });

  it("posts to the user's or the organization's new-App page, on github.com or a GHES, with the state", () => {
    expect(manifestPostUrl("https://github.com", { kind: "user" }, "s t")).toBe("https://github.com/settings/apps/new?state=s%20t");
    expect(manifestPostUrl("https://ghes.example.com/", { kind: "organization", login: "octo-org" }, "abc")).toBe(
      "https://ghes.example.com/organizations/octo-org/settings/apps/new?state=abc",
    );
    expect(installUrl("https://github.com/apps/edgerunner-x/")).toBe("https://github.com/apps/edgerunner-x/installations/new");
  });

  it("names the App after the coordinator's host, within GitHub's 34 characters", () => {
    expect(defaultAppName("https://edgerunner.acme.workers.dev")).toBe("Edgerunner edgerunner.acme");
    const long = defaultAppName("https://a-very-long-subdomain-name-for-runners.example.com");
    expect(long.length).toBeLessThanOrEqual(APP_NAME_MAX);
    expect(long).toMatch(/^Edgerunner a-very/);
  });

  it("says when GitHub cannot reach PUBLIC_URL", () => {
    expect(unreachableByGithub("http://127.0.0.1:8787")).toMatch(/GitHub cannot reach/);
    expect(unreachableByGithub("http://localhost:8787")).toMatch(/GitHub cannot reach/);
    expect(unreachableByGithub("https://edgerunner.acme.workers.dev")).toBeNull();
  });
});
