import { createRequire } from "node:module";
import { describe, expect, it } from "vitest";
import {
  applyInstallationEvent,
  InstallationPayload,
  installationCredentialsName,
  installationOffers,
} from "../../../src/setup/installations";

const payload = (action: string, extra: Record<string, unknown> = {}) =>
  InstallationPayload.parse({
    action,
    installation: { id: 77, app_id: 9, account: { login: "octo-org", type: "Organization" }, repository_selection: "selected" },
    ...extra,
  });

describe("installation events", () => {
  it("created lists the repositories; added and removed change them; deleted keeps the record as deleted", () => {
    const created = applyInstallationEvent(
      null,
      "installation",
      payload("created", { repositories: [{ full_name: "octo-org/b" }, { full_name: "octo-org/a" }] }),
    );
    expect(created).toEqual({
      installationId: 77,
      accountLogin: "octo-org",
      accountType: "Organization",
      repositorySelection: "selected",
      repositories: ["octo-org/a", "octo-org/b"],
      status: "active",
    });
    const changed = applyInstallationEvent(
      created,
      "installation_repositories",
      payload("added", { repositories_added: [{ full_name: "octo-org/c" }], repositories_removed: [{ full_name: "octo-org/a" }] }),
    );
    expect(changed?.repositories).toEqual(["octo-org/b", "octo-org/c"]);
    expect(applyInstallationEvent(changed, "installation", payload("suspend"))?.status).toBe("suspended");
    expect(applyInstallationEvent(changed, "installation", payload("unsuspend"))?.status).toBe("active");
    const gone = applyInstallationEvent(changed, "installation", payload("deleted"));
    expect(gone).toMatchObject({ status: "deleted", repositories: ["octo-org/b", "octo-org/c"] });
  });

  it("an action we do not follow records nothing new", () => {
    expect(applyInstallationEvent(null, "installation", payload("new_permissions_accepted"))).toBeNull();
  });

  it("offers the organization and each repository, marking what is registered (logins compare case-insensitively)", () => {
    const inst = {
      installationId: 1,
      accountLogin: "Octo-Org",
      accountType: "Organization" as const,
      repositorySelection: "all" as const,
      repositories: ["Octo-Org/a", "Octo-Org/b"],
      status: "active" as const,
    };
    expect(installationOffers(inst, [{ kind: "repository", owner: "octo-org", name: "A" }])).toEqual({
      organization: { login: "Octo-Org", added: false },
      repositories: [
        { fullName: "Octo-Org/a", added: true },
        { fullName: "Octo-Org/b", added: false },
      ],
    });
    expect(
      installationOffers({ ...inst, accountType: "User" }, [{ kind: "organization", owner: "octo-org", name: "" }]).organization,
    ).toBeNull();
  });

  it("names an installation's credentials after the App and the account, free of collisions", () => {
    expect(installationCredentialsName("edgerunner-acme", "octo-org", new Set())).toBe("edgerunner-acme-octo-org");
    expect(installationCredentialsName("edgerunner-acme", "octo-org", new Set(["edgerunner-acme-octo-org"]))).toBe(
      "edgerunner-acme-octo-org-2",
    );
    expect(installationCredentialsName("--x", "a b", new Set())).toBe("x-a-b");
  });
});

describe("GitHub's own example payloads (@octokit/webhooks-examples)", () => {
  const require = createRequire(import.meta.url);
  const all = require("@octokit/webhooks-examples/api.github.com/index.json") as { name: string; examples: Record<string, unknown>[] }[];
  const of = (event: string) => all.find((e) => e.name === event)!.examples;

  it("every installation and installation_repositories example parses, and each action we follow is applied", () => {
    const seen: string[] = [];
    for (const event of ["installation", "installation_repositories"]) {
      for (const ex of of(event)) {
        const p = InstallationPayload.parse(ex);
        const rec = applyInstallationEvent(null, event, p);
        seen.push(`${event}.${p.action}:${rec?.status ?? "none"}`);
        if (event === "installation" && p.action === "created")
          expect(rec!.repositories.length).toBe((ex.repositories as unknown[]).length);
      }
    }
    expect(seen).toEqual(
      expect.arrayContaining(["installation.created:active", "installation.deleted:deleted", "installation_repositories.added:active"]),
    );
  });
});
