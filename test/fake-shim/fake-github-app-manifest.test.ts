/**
 * The fake GitHub playing GitHub's side of the App manifest flow and of installing the App, over
 * HTTP as a browser and a site would: the form, the confirmation page, the code, its one
 * conversion, the App's JWT, the install page, the signed `installation` webhook and the way on
 * to the setup URL, the installation's token, and later changes of its repositories. (In the
 * unit project: plain Node, a webhook receiver on loopback.)
 */
import { createHmac, createSign } from "node:crypto";
import { createServer, type Server } from "node:http";
import { createRequire } from "node:module";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createWorld, type FakeWorld } from "../fake-github/control-client.ts";
import { type FakeGithub, startFakeGithub } from "../fake-github/server.ts";

const require = createRequire(import.meta.url);
const examples = require("@octokit/webhooks-examples/api.github.com/index.json") as { name: string; examples: any[] }[];
/** GitHub's example payload of the event and action (the last one: the newest shape, with `requester`). */
const example = (event: string, action: string) =>
  examples
    .find((e) => e.name === event)!
    .examples.filter((x) => x.action === action)
    .at(-1)!;

let github: FakeGithub;
let receiver: Server;
let hookUrl: string;
let received: { headers: Record<string, string | string[] | undefined>; body: string; json: any }[] = [];
let world: FakeWorld;

beforeAll(async () => {
  github = await startFakeGithub();
  receiver = createServer((req, res) => {
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", () => {
      received.push({ headers: req.headers, body, json: JSON.parse(body) });
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((r) => receiver.listen(0, "127.0.0.1", r));
  hookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/webhooks/github`;
});
afterAll(async () => {
  await github.close();
  await new Promise((r) => receiver.close(r));
});
beforeEach(async () => {
  received = [];
  world = await createWorld(github.url);
  await world.seed({ repos: ["octo/app", "octo/lib", "octocat/hello"], orgs: ["octo"], pats: [{ token: "ghp_x" }] });
});

const manifest = (over: Record<string, unknown> = {}) => ({
  name: "Edgerunner",
  url: "https://edgerunner.example.com",
  hook_attributes: { url: hookUrl },
  redirect_url: "https://edgerunner.example.com/ui/setup/github/created",
  setup_url: "https://edgerunner.example.com/ui/setup/github/installed",
  public: false,
  default_permissions: { actions: "read", administration: "write", organization_self_hosted_runners: "write", metadata: "read" },
  default_events: ["workflow_job"],
  ...over,
});

const postForm = (url: string, fields: [string, string][]) =>
  fetch(url, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams(fields).toString(),
    redirect: "manual",
  });

/** An attribute value as the browser reads it. */
const htmlText = (s: string) =>
  s.replace(/&(amp|lt|gt|quot|#39);/g, (_, e: string) => ({ amp: "&", lt: "<", gt: ">", quot: '"', "#39": "'" })[e]!);

/** The form a site posts, then the confirmation page's own form: the App exists and the browser is sent on. */
async function createApp(m: object, { org, state = "st4te" }: { org?: string; state?: string } = {}) {
  const target = `${world.url}${org ? `/organizations/${org}` : ""}/settings/apps/new?state=${state}`;
  const confirm = await postForm(target, [["manifest", JSON.stringify(m)]]);
  expect(confirm.status).toBe(200);
  const page = await confirm.text();
  const action = htmlText(/<form method="post" action="([^"]+)"/.exec(page)![1]!);
  const hidden = htmlText(/name="manifest" value="([^"]*)"/.exec(page)![1]!);
  const name = htmlText(/<input name="name"[^>]*value="([^"]*)"/.exec(page)![1]!);
  const created = await postForm(action, [
    ["manifest", hidden],
    ["confirm", "1"],
    ["name", name],
  ]);
  return { page, created, location: created.headers.get("location") ?? "" };
}

async function convert(code: string, ghes = false) {
  const res = await fetch(`${ghes ? world.ghesUrl : world.url}/app-manifests/${code}/conversions`, { method: "POST" });
  return { status: res.status, body: (await res.json()) as any };
}

function jwt(appId: number | string, pem: string): string {
  const now = Math.floor(Date.now() / 1000);
  const enc = (o: object) => Buffer.from(JSON.stringify(o)).toString("base64url");
  const input = `${enc({ alg: "RS256", typ: "JWT" })}.${enc({ iat: now - 60, exp: now + 540, iss: String(appId) })}`;
  return `${input}.${createSign("RSA-SHA256").update(input).sign(pem).toString("base64url")}`;
}

const get = async (path: string, token: string) => {
  const res = await fetch(`${world.url}${path}`, { headers: { authorization: `Bearer ${token}` } });
  return { status: res.status, body: (await res.json()) as any };
};

/** Opens the install page for `account` and submits it with the given repositories ("all" when none). */
async function install(slug: string, account: string, repos: string[] = [], state?: string) {
  let res = await fetch(`${world.url}/apps/${slug}/installations/new${state ? `?state=${state}` : ""}`, { redirect: "manual" });
  let page = await res.text();
  const link = new RegExp(`<a href="([^"]+)">${account}</a>`).exec(page);
  if (link) {
    res = await fetch(htmlText(link[1]!), { redirect: "manual" });
    page = await res.text();
  }
  expect(page).toContain(">Install</button>");
  const fields: [string, string][] = [["target_id", /name="target_id" value="(\d+)"/.exec(page)![1]!]];
  const hiddenState = /name="state" value="([^"]*)"/.exec(page);
  if (hiddenState) fields.push(["state", htmlText(hiddenState[1]!)]);
  fields.push(["repository_selection", repos.length ? "selected" : "all"]);
  for (const r of repos) fields.push(["repository_ids[]", new RegExp(`value="(\\d+)"> ${r}</label>`).exec(page)![1]!]);
  return postForm(`${world.url}/apps/${slug}/installations`, fields);
}

const signed = (r: (typeof received)[number], secret: string) =>
  r.headers["x-hub-signature-256"] === `sha256=${createHmac("sha256", secret).update(r.body).digest("hex")}`;

describe("creating an App from a manifest", () => {
  it("confirms, redirects with a one-time code, and converts it once into the App with its key and secrets", async () => {
    const { page, created, location } = await createApp(manifest(), { org: "octo" });
    expect(page).toContain("Create GitHub App for <span>octo</span>");
    expect(page).toContain('<button type="submit">Create GitHub App</button>');
    expect(page).toContain("<li>administration: write</li>");
    expect(page).toContain("<li>workflow_job</li>");
    expect(created.status).toBe(302);
    const redirect = new URL(location);
    expect(`${redirect.origin}${redirect.pathname}`).toBe("https://edgerunner.example.com/ui/setup/github/created");
    expect(redirect.searchParams.get("state")).toBe("st4te");
    const code = redirect.searchParams.get("code")!;
    expect(code).toMatch(/^[0-9a-f]{40}$/);

    const first = await convert(code, true);
    expect(first.status).toBe(201);
    const app = first.body;
    expect(app).toMatchObject({
      slug: "edgerunner",
      name: "Edgerunner",
      owner: { login: "octo", type: "Organization" },
      external_url: "https://edgerunner.example.com",
      permissions: manifest().default_permissions,
      events: ["workflow_job"],
      client_id: expect.stringMatching(/^Iv23li[A-Za-z0-9]{14}$/),
      client_secret: expect.stringMatching(/^[0-9a-f]{40}$/),
      webhook_secret: expect.stringMatching(/^[0-9a-f]{40}$/),
      pem: expect.stringMatching(/^-----BEGIN RSA PRIVATE KEY-----\n[\s\S]+\n-----END RSA PRIVATE KEY-----\n?$/),
    });
    expect(await convert(code)).toEqual({
      status: 404,
      body: {
        message: "Not Found",
        documentation_url: "https://docs.github.com/rest/apps/apps#create-a-github-app-from-a-manifest",
        status: "404",
      },
    });
    const conversions = (await world.requests()).filter((r) => r.operation === "create_app_from_manifest");
    expect(conversions.map((r) => [r.status, r.auth, r.ghes])).toEqual([
      [201, "none", true],
      [404, "none", false],
    ]);

    // The key it handed out signs JWTs the world accepts for that App, by id or client id alike.
    const me = await get("/app", jwt(app.id, app.pem));
    expect(me).toMatchObject({ status: 200, body: { id: app.id, slug: "edgerunner", client_id: app.client_id } });
    expect((await get("/app", jwt(app.client_id, app.pem))).body.id).toBe(app.id);
    expect((await get("/app/installations", jwt(app.id, app.pem))).body).toEqual([]);
    expect((await world.apps()).apps.map((a) => [a.id, a.hook_id > 0, a.webhook_secret])).toEqual([[app.id, true, app.webhook_secret]]);
  });

  it("refuses a code an hour old, as GitHub gives the whole flow an hour", async () => {
    const { location } = await createApp(manifest());
    await world.setNow(Date.now() + 60 * 60_000 + 1000);
    expect((await convert(new URL(location).searchParams.get("code")!)).status).toBe(404);
  });

  it("acts as the web user a control route names, and lands on the App's page without a redirect_url", async () => {
    await world.setWebUser("monalisa");
    const { page, location } = await createApp(manifest({ redirect_url: undefined, name: "Mona's Runner Äpp" }));
    expect(page).toContain("Create GitHub App for <span>monalisa</span>");
    expect(location).toBe(`${world.url}/settings/apps/mona-s-runner-app`);
    expect(await (await fetch(location)).text()).toContain("Owned by monalisa");
  });

  it("gives an inactive webhook no secret and sends it nothing", async () => {
    const { location } = await createApp(manifest({ hook_attributes: { url: hookUrl, active: false } }));
    const app = (await convert(new URL(location).searchParams.get("code")!)).body;
    expect(app.webhook_secret).toBeNull();
    expect((await install(app.slug, "octocat")).status).toBe(302);
    await world.settleDeliveries();
    expect(received).toEqual([]);
  });
});

describe("installing the App", () => {
  async function orgApp(over: Record<string, unknown> = {}) {
    const { location } = await createApp(manifest(over), { org: "octo" });
    return (await convert(new URL(location).searchParams.get("code")!)).body;
  }

  it("installs on chosen repositories, sends the signed installation event, and goes on to the setup URL", async () => {
    const app = await orgApp();
    const res = await install(app.slug, "octo", ["octo/app"], "after-install");
    expect(res.status).toBe(302);
    const setup = new URL(res.headers.get("location")!);
    expect(`${setup.origin}${setup.pathname}`).toBe("https://edgerunner.example.com/ui/setup/github/installed");
    expect(setup.searchParams.get("setup_action")).toBe("install");
    expect(setup.searchParams.get("state")).toBe("after-install");
    const installationId = Number(setup.searchParams.get("installation_id"));

    await world.settleDeliveries();
    expect(received).toHaveLength(1);
    const hook = received[0]!;
    expect(signed(hook, app.webhook_secret)).toBe(true);
    expect(hook.headers).toMatchObject({
      "x-github-event": "installation",
      "x-github-hook-installation-target-type": "integration",
      "x-github-hook-installation-target-id": String(app.id),
      "x-github-hook-id": String((await world.apps()).apps[0]!.hook_id),
      "x-github-delivery": expect.stringMatching(/^[0-9a-f-]{36}$/),
    });
    const created = example("installation", "created");
    expect(Object.keys(hook.json).sort()).toEqual(Object.keys(created).sort());
    expect(Object.keys(hook.json.installation)).toEqual(expect.arrayContaining(Object.keys(created.installation)));
    expect(hook.json).toMatchObject({
      action: "created",
      installation: {
        id: installationId,
        app_id: app.id,
        app_slug: "edgerunner",
        account: { login: "octo", type: "Organization" },
        target_type: "Organization",
        repository_selection: "selected",
        permissions: app.permissions,
        events: ["workflow_job"],
      },
      repositories: [{ id: expect.any(Number), node_id: expect.any(String), name: "app", full_name: "octo/app", private: true }],
      sender: { login: "octocat", type: "User" },
    });

    // Its token works where it was installed, and nowhere else.
    const token = await fetch(`${world.url}/app/installations/${installationId}/access_tokens`, {
      method: "POST",
      headers: { authorization: `Bearer ${jwt(app.id, app.pem)}` },
    });
    const minted = (await token.json()) as any;
    expect(minted).toMatchObject({ permissions: app.permissions, repository_selection: "selected" });
    const repos = await get("/installation/repositories", minted.token);
    expect([repos.body.total_count, repos.body.repository_selection, repos.body.repositories.map((r: any) => r.full_name)]).toEqual([
      1,
      "selected",
      ["octo/app"],
    ]);
    expect((await get("/repos/octo/app/actions/runners", minted.token)).status).toBe(200);
    expect((await get("/repos/octo/lib/actions/runners", minted.token)).status).toBe(404);
    expect((await get("/app/installations", jwt(app.id, app.pem))).body.map((i: any) => i.id)).toEqual([installationId]);
  });

  it("delivers workflow_job for the repositories it covers, then for those added, with no other wiring", async () => {
    const app = await orgApp();
    const res = await install(app.slug, "octo", ["octo/app"]);
    const installationId = Number(new URL(res.headers.get("location")!).searchParams.get("installation_id"));
    await world.settleDeliveries();
    received = [];

    const [inside] = await world.queueJobs({ repository: "octo/app", labels: ["self-hosted"] });
    await world.queueJobs({ repository: "octo/lib", labels: ["self-hosted"] });
    await world.settleDeliveries();
    expect(received.map((r) => [r.headers["x-github-event"], r.json.workflow_job.id, r.json.installation.id])).toEqual([
      ["workflow_job", inside!.id, installationId],
    ]);
    expect(signed(received[0]!, app.webhook_secret)).toBe(true);

    received = [];
    const changed = await world.changeInstallationRepositories(installationId, { add: ["octo/lib"] });
    expect(changed.repositories).toEqual(["octo/app", "octo/lib"]);
    await world.settleDeliveries();
    const added = received[0]!;
    expect(Object.keys(added.json).sort()).toEqual(Object.keys(example("installation_repositories", "added")).sort());
    expect(added.json).toMatchObject({
      action: "added",
      repository_selection: "selected",
      repositories_added: [{ full_name: "octo/lib" }],
      repositories_removed: [],
    });
    expect(added.headers["x-github-event"]).toBe("installation_repositories");

    received = [];
    const [later] = await world.queueJobs({ repository: "octo/lib", labels: ["self-hosted"] });
    await world.settleDeliveries();
    expect(received.map((r) => r.json.workflow_job.id)).toEqual([later!.id]);
  });

  it("removes repositories and uninstalls with their events; the token stops working", async () => {
    const app = await orgApp();
    const res = await install(app.slug, "octo");
    const installationId = Number(new URL(res.headers.get("location")!).searchParams.get("installation_id"));
    const minted = (await (
      await fetch(`${world.url}/app/installations/${installationId}/access_tokens`, {
        method: "POST",
        headers: { authorization: `Bearer ${jwt(app.id, app.pem)}` },
      })
    ).json()) as any;
    expect((await get("/installation/repositories", minted.token)).body.total_count).toBe(2);

    // Taking one away from an "all" installation makes it a selection of the rest.
    const changed = await world.changeInstallationRepositories(installationId, { remove: ["octo/lib"] });
    expect([changed.repository_selection, changed.repositories]).toEqual(["selected", ["octo/app"]]);
    await world.uninstall(installationId);
    await world.settleDeliveries();
    expect(received.map((r) => [r.headers["x-github-event"], r.json.action])).toEqual([
      ["installation", "created"],
      ["installation_repositories", "removed"],
      ["installation", "deleted"],
    ]);
    expect(received[1]!.json.repositories_removed.map((r: any) => r.full_name)).toEqual(["octo/lib"]);
    expect(received[2]!.json.installation.id).toBe(installationId);
    expect((await get("/installation/repositories", minted.token)).status).toBe(401);
    expect((await world.apps()).installations).toEqual([]);
  });

  it("offers a private App only on its owner's account, a public one also on the user and the organizations", async () => {
    const { location } = await createApp(manifest({ setup_url: undefined }));
    const mine = (await convert(new URL(location).searchParams.get("code")!)).body;
    const page = await (await fetch(`${world.url}/apps/${mine.slug}/installations/new`)).text();
    expect(page).toContain("<strong>octocat</strong>");
    expect(page).toContain("octocat/hello</label>");
    expect(page).not.toContain("octo/app");
    const res = await install(mine.slug, "octocat");
    const id = (await world.apps()).installations[0]!.id;
    expect(res.headers.get("location")).toBe(`${world.url}/settings/installations/${id}`);

    const pub = await orgApp({ name: "Everywhere", public: true });
    const choices = await (await fetch(`${world.url}/apps/${pub.slug}/installations/new`)).text();
    expect([...choices.matchAll(/<a href="[^"]+">([^<]+)<\/a>/g)].map((m) => m[1])).toEqual(["octo", "octocat"]);
    expect((await install(pub.slug, "octocat", ["octocat/hello"])).status).toBe(302);
  });

  it("refuses a selection without repositories and a second installation on the same account", async () => {
    const app = await orgApp();
    const form = await (await fetch(`${world.url}/apps/${app.slug}/installations/new`)).text();
    const targetId = /name="target_id" value="(\d+)"/.exec(form)![1]!;
    const submit = (selection: string) =>
      postForm(`${world.url}/apps/${app.slug}/installations`, [
        ["target_id", targetId],
        ["repository_selection", selection],
      ]);
    const empty = await submit("selected");
    expect([empty.status, await empty.text()]).toEqual([422, expect.stringContaining("Select at least one repository.")]);
    expect((await submit("all")).status).toBe(302);
    const twice = await submit("all");
    expect([twice.status, await twice.text()]).toEqual([422, expect.stringContaining("Edgerunner is already installed on octo.")]);
    const again = await fetch(`${world.url}/apps/${app.slug}/installations/new`, { redirect: "manual" });
    expect(again.headers.get("location")).toMatch(/\/settings\/installations\/\d+$/);
    expect((await world.apps()).installations).toHaveLength(1);
  });
});
