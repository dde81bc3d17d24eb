import { describe, expect, it } from "vitest";
import { appWatchKey } from "../../../src/recovery/watch-list";
import { newWorld } from "../github-helpers";
import { api, unique } from "../helpers";
import { createAppAtGithub, postForm, sessionWithCsrf } from "../setup-helpers";
import { ui } from "../ui-helpers";
import { pass, recoveriesOf, scaleSetOf } from "./recovery-world";

/**
 * An App made on the first-run page: GitHub's installation events to its webhook can fail like any
 * delivery. Recovery reads the App's record of them (as the App) and takes in the latest about
 * each installation; an older one a later one made moot is recorded superseded, never applied.
 */
describe("installation events recovered through the App's webhook", () => {
  it("takes in a lost installation_repositories, not the older installation created it supersedes", async () => {
    const world = await newWorld();
    await world.seed({ repos: ["octo/docs"] });
    const endpoint = unique("fake-web");
    expect((await api.post("/api/v1/github/endpoints", { name: endpoint, base_url: world.url, api_base_url: world.url })).status).toBe(201);
    const s = await sessionWithCsrf();
    const { back } = await createAppAtGithub(s, endpoint, `Edgerunner ${unique("r")}`.slice(0, 34));
    expect((await ui("GET", back, { cookie: s.cookie })).status).toBe(303);
    const app = (await world.apps()).apps.at(-1)!;
    const appRow = ((await api.get("/api/v1/github/apps")).body as { id: string; app_id: number }[]).find((a) => a.app_id === app.id)!;

    // Installed on octo; the coordinator learns it from GitHub's setup redirect (its webhook cannot reach this test).
    const page = await (await fetch(`${world.url}/apps/${app.slug}/installations/new`)).text();
    const target = /name="target_id" value="(\d+)"/.exec(page)![1]!;
    const installed = await postForm(`${world.url}/apps/${app.slug}/installations`, { target_id: target, repository_selection: "all" });
    const setup = new URL(installed.headers.get("location")!);
    expect((await ui("GET", `${setup.pathname}${setup.search}`, { cookie: s.cookie })).status).toBe(303);
    const inst = (await api.get(`/api/v1/github/apps/${appRow.id}`)).body.installations[0];
    expect(inst.repositories).toContain("octo/docs");

    // A repository fed by the App's webhook, with a scale set: recovery watches the App's webhook.
    const creds = (await api.get(`/api/v1/github/credentials/${inst.credentials_id}`)).body;
    const repo = await api.post("/api/v1/repositories", {
      owner: "octo",
      name: "app",
      credentials_name: creds.name,
      webhook_secret: "whsec-app-fed-1",
    });
    await scaleSetOf("repositories", repo.body.id);

    // octo/docs leaves the installation; GitHub's `installation_repositories` delivery fails.
    await world.changeInstallationRepositories(inst.installation_id, { remove: ["octo/docs"] });
    await world.settleDeliveries();

    await pass();
    const after = (await api.get(`/api/v1/github/apps/${appRow.id}`)).body.installations[0];
    expect(after.repositories).not.toContain("octo/docs");
    expect(after.status).toBe("active");
    const rows = await recoveriesOf(appWatchKey(endpoint, app.id));
    expect(rows.map((r) => [r.event, r.action, r.outcome]).sort()).toEqual([
      ["installation", "created", "superseded"],
      ["installation_repositories", "removed", "recovered"],
    ]);
  });
});
