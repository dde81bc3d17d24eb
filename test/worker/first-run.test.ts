/**
 * The first-run page's GitHub App round trip in workerd, against the fake GitHub's manifest and
 * installation pages: the App is made once per state and session, its secrets are sealed as
 * GitHub handed them over and never shown, its installation (from the setup redirect or from its
 * webhook) makes the installation's credentials, and the offers become entities.
 */
import { env, exports } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { keyringFor } from "../../src/crypto/keyring";
import { open } from "../../src/crypto/secret-box";
import { secretContext } from "../../src/crypto/secret-contexts";
import type { FakeWorld } from "../fake-github/control-client";
import type { FakeAppsState, FakeManifestApp } from "../fake-github/types";
import { newWorld } from "./github-helpers";
import { api, unique } from "./helpers";
import { createAppAtGithub as createApp, postForm, sessionWithCsrf } from "./setup-helpers";
import { ORIGIN, ui } from "./ui-helpers";

let world: FakeWorld;
let endpoint: string;
const createAppAtGithub = (s: { cookie: string; csrf: string }, name: string) => createApp(s, endpoint, name);

async function fakeApps(): Promise<FakeAppsState> {
  return world.apps();
}

async function signed(secret: string, event: string, payload: unknown, headers: Record<string, string> = {}) {
  const body = JSON.stringify(payload);
  const key = await crypto.subtle.importKey("raw", new TextEncoder().encode(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  const mac = [...new Uint8Array(await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(body)))]
    .map((b) => b.toString(16).padStart(2, "0"))
    .join("");
  const res = await exports.default.fetch(
    new Request(`${ORIGIN}/webhooks/github`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "x-github-event": event,
        "x-github-delivery": crypto.randomUUID(),
        "x-github-enterprise-host": new URL(world.url).host,
        "x-hub-signature-256": `sha256=${mac}`,
        ...headers,
      },
      body,
    }),
  );
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

beforeAll(async () => {
  world = await newWorld();
  await world.seed({ repos: ["octo/docs"] });
  endpoint = unique("fake-web");
  // The fake's web pages and API live at the world's URL (github.com style).
  const res = await api.post("/api/v1/github/endpoints", { name: endpoint, base_url: world.url, api_base_url: world.url });
  expect(res.status, res.text).toBe(201);
});

describe("the GitHub App made on the first-run page", () => {
  let app: FakeManifestApp;
  let appRowId: string;

  it("is made from GitHub's redirect once, its secrets sealed as GitHub sent them, and shown without them", async () => {
    const s = await sessionWithCsrf();
    const { back, started } = await createAppAtGithub(s, `Edgerunner ${unique("t")}`.slice(0, 34));
    // The page that posts the manifest may post to GitHub, and only there.
    expect(started.headers.get("content-security-policy")).toContain(`form-action 'self' ${new URL(world.url).origin}`);

    const done = await ui("GET", back, { cookie: s.cookie });
    expect(done.status, done.html).toBe(303);
    expect(done.headers.get("location")).toBe("/ui/setup?done=app_created#app");
    // A reload of GitHub's redirect finds the App made: no second exchange, no second App.
    const again = await ui("GET", back, { cookie: s.cookie });
    expect(again.headers.get("location")).toBe("/ui/setup?done=app_created#app");

    app = (await fakeApps()).apps.at(-1)!;
    const listed = await api.get("/api/v1/github/apps");
    const mine = (listed.body as { id: string; app_id: number }[]).filter((a) => a.app_id === app.id);
    expect(mine).toHaveLength(1);
    appRowId = mine[0]!.id;
    expect(listed.body.find((a: { id: string }) => a.id === appRowId)).toMatchObject({
      slug: app.slug,
      owner: "octo",
      endpoint,
      permissions: { actions: "read", metadata: "read", administration: "write", organization_self_hosted_runners: "write" },
      events: ["workflow_job"],
      has_private_key: true,
      has_webhook_secret: true,
    });
    for (const secret of [app.pem, app.webhook_secret!, app.client_secret]) expect(listed.text).not.toContain(secret);

    const row = await env.DB.prepare("SELECT * FROM github_apps WHERE id = ?").bind(appRowId).first<Record<string, string>>();
    const keyring = await keyringFor(env);
    expect(await open(keyring, row!.private_key_enc!, secretContext.appPrivateKey(appRowId))).toBe(app.pem);
    expect(await open(keyring, row!.webhook_secret_enc!, secretContext.appOwnWebhookSecret(appRowId))).toBe(app.webhook_secret);
    expect(await open(keyring, row!.client_secret_enc!, secretContext.appClientSecret(appRowId))).toBe(app.client_secret);
    expect(row!.bound_api_url).toBe(world.url);
  });

  it("refuses GitHub's redirect in another session, with an unknown state, or after the hour; and to a read-only sign-in", async () => {
    const a = await sessionWithCsrf();
    const { back } = await createAppAtGithub(a, `Edgerunner ${unique("x")}`.slice(0, 34));
    const before = (await fakeApps()).apps.length;
    const b = await sessionWithCsrf();
    const stolen = await ui("GET", back, { cookie: b.cookie });
    expect(stolen.status).toBe(403);
    expect(stolen.html).toContain("not started from your session");
    const forged = await ui("GET", back.replace(/state=[^&]+/, "state=forged"), { cookie: a.cookie });
    expect(forged.status).toBe(403);
    const noCode = await ui("GET", back.replace(/code=[^&]+&?/, ""), { cookie: a.cookie });
    expect(noCode.status).toBe(400);
    // Nothing was exchanged: the code still works for its own session.
    const rows = await env.DB.prepare("SELECT count(*) AS n FROM github_apps").first<{ n: number }>();
    await env.DB.prepare("UPDATE github_app_manifests SET expires_at = 0 WHERE app_row_id IS NULL").run();
    const late = await ui("GET", back, { cookie: a.cookie });
    expect(late.status).toBe(410);
    expect((await env.DB.prepare("SELECT count(*) AS n FROM github_apps").first<{ n: number }>())!.n).toBe(rows!.n);
    expect((await fakeApps()).apps.length).toBe(before);
  });

  it("a redirect arriving without the session cookie (GitHub is another site) reloads itself to bring it", async () => {
    const bare = await ui("GET", "/ui/setup/app-created?code=abc&state=def");
    expect(bare.status).toBe(200);
    expect(bare.html).toContain('http-equiv="refresh"');
    expect(bare.html).toContain("/ui/setup/app-created?code=abc&amp;state=def&amp;bounced=1");
    const second = await ui("GET", "/ui/setup/app-created?code=abc&state=def&bounced=1");
    expect(second.status).toBe(303);
    expect(second.headers.get("location")).toBe(
      `/ui/login?next=${encodeURIComponent("/ui/setup/app-created?code=abc&state=def&bounced=1")}`,
    );
  });

  it("its installation, learnt from GitHub's setup redirect, gets credentials; its offers become entities", async () => {
    const s = await sessionWithCsrf();
    // The user installs the App on octo (all repositories) on GitHub's page.
    const form = await fetch(`${world.url}/apps/${app.slug}/installations/new`);
    const page = await form.text();
    const target = /name="target_id" value="(\d+)"/.exec(page)?.[1];
    expect(target, page).toBeDefined();
    const installed = await postForm(`${world.url}/apps/${app.slug}/installations`, { target_id: target!, repository_selection: "all" });
    expect(installed.status).toBe(302);
    const setup = new URL(installed.headers.get("location")!);
    expect(setup.pathname).toBe("/ui/setup/installed");
    const res = await ui("GET", `${setup.pathname}${setup.search}`, { cookie: s.cookie });
    expect(res.status, res.html).toBe(303);

    const shown = (await api.get(`/api/v1/github/apps/${appRowId}`)).body;
    expect(shown.installations).toHaveLength(1);
    const inst = shown.installations[0];
    expect(inst).toMatchObject({ account: "octo", account_type: "Organization", repository_selection: "all", status: "active" });
    expect(inst.repositories).toEqual(expect.arrayContaining(["octo/app", "octo/docs"]));
    const creds = (await api.get(`/api/v1/github/credentials/${inst.credentials_id}`)).body;
    expect(creds).toMatchObject({
      auth_type: "app",
      app_id: app.id,
      installation_id: inst.installation_id,
      has_secret: true,
      has_webhook_secret: true,
    });

    // The page offers octo and its repositories; adding octo/app makes the repository entity with those credentials.
    const setupPage = await ui("GET", "/ui/setup", { cookie: s.cookie });
    expect(setupPage.html).toContain('name="repository" value="octo/app"');
    const added = await ui("POST", "/ui/setup/entities", {
      cookie: s.cookie,
      form: { _csrf: s.csrf, credentials: creds.name, repository: "octo/app" },
    });
    expect(added.status, added.html).toBe(303);
    const repos = (await api.get("/api/v1/repositories")).body as { owner: string; name: string; credentials_name: string }[];
    expect(repos.find((r) => r.owner === "octo" && r.name === "app" && r.credentials_name === creds.name)).toBeDefined();
    const after = await ui("GET", "/ui/setup", { cookie: s.cookie });
    expect(after.html).toMatch(
      /name="repository" value="octo\/app" disabled="" checked=""|name="repository" value="octo\/app"[^>]*disabled/,
    );
  });

  it("its installation webhooks, signed with the App's secret, keep the record; another secret is refused", async () => {
    const state = await fakeApps();
    const created = state.deliveries.find((d) => d.app_id === app.id && d.event === "installation" && d.action === "created")!;
    expect(created).toBeDefined();
    // The delivery GitHub sent when the App was installed, as it arrives here (after the redirect: nothing changes).
    const first = await signed(app.webhook_secret!, "installation", created.payload);
    expect(first).toEqual({ status: 200, body: { installation: created.installation_id, app_id: app.id, status: "active" } });
    expect((await signed("not-the-app-secret", "installation", created.payload)).status).toBe(401);

    await world.changeInstallationRepositories(created.installation_id, { remove: ["octo/docs"] });
    const removed = (await fakeApps()).deliveries.find(
      (d) => d.event === "installation_repositories" && d.installation_id === created.installation_id,
    )!;
    expect((await signed(app.webhook_secret!, "installation_repositories", removed.payload)).status).toBe(200);
    let inst = (await api.get(`/api/v1/github/apps/${appRowId}`)).body.installations[0];
    expect(inst.repositories).not.toContain("octo/docs");

    await world.uninstall(created.installation_id);
    const deleted = (await fakeApps()).deliveries.find((d) => d.action === "deleted" && d.installation_id === created.installation_id)!;
    expect((await signed(app.webhook_secret!, "installation", deleted.payload)).body).toMatchObject({ status: "deleted" });
    inst = (await api.get(`/api/v1/github/apps/${appRowId}`)).body.installations[0];
    expect(inst.status).toBe("deleted");

    // An installation of an App not made here is not ours to read: ignored, as before.
    const foreign = { ...(created.payload as Record<string, unknown>) };
    foreign.installation = { ...(foreign.installation as object), app_id: 99_999_999 };
    expect((await signed("whatever-secret", "installation", foreign)).status).toBe(202);
  });
});
