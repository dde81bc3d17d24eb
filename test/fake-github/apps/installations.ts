/**
 * Installing a GitHub App made by manifest, GitHub's side (Node only):
 *
 *   GET  {web}/apps/{slug}/installations/new[?state=S]      where it may go: the owner's account,
 *        and for a public App also the signed-in user and the world's organizations (a link each,
 *        named by the account's login); with one account, straight to the next page
 *   GET  {web}/apps/{slug}/installations/new/permissions?target_id=N[&state=S]
 *        what it asks for, "All repositories" or "Only select repositories" (a checkbox per
 *        repository of the account, labelled owner/name), and the button "Install"
 *   POST {web}/apps/{slug}/installations                    makes the installation
 *
 * The installation gets the App's permissions and events; GitHub then sends the App's webhook
 * `installation` `created` (signed with its secret; one attempt, recorded under the App's hook
 * in deliveries.ts; not awaited, as on GitHub: POST /_fake/workflow-settle waits for it) and the browser goes to the App's setup URL with
 * `installation_id`, `setup_action=install` (and `state`), or without one to
 * {web}/settings/installations/{id}. Control routes change an installation's repositories
 * (`installation_repositories` added/removed) or delete it (`installation` deleted).
 */
import { randomUUID } from "node:crypto";
import { appHookHeaders } from "../app-webhook.ts";
import { appKey, deliver, setTarget } from "../deliveries.ts";
import { deliveryHeaders } from "../hook-delivery.ts";
import type { AppEventDelivery, FakeAppInstallation, FakeAppsState, FakeInstallation, FakeManifestApp } from "../types.ts";
import { esc, htmlPage, problemPage, type WebAnswer, type WebRequest, type WebRoute } from "../web-page.ts";
import type { World } from "../world.ts";
import { type AppRegistry, registryOf } from "./registry.ts";
import { coveredRepositories, installationView, repositoryRef, simpleUser } from "./rest.ts";

/** The accounts the signed-in user may install `app` on: a private App only on its owner's. */
function installTargets(w: World, reg: AppRegistry, app: FakeManifestApp): string[] {
  if (!app.public) return [app.owner.login];
  return [...new Set([app.owner.login, reg.webUser.toLowerCase(), ...[...w.orgs].sort()])];
}

const installationOf = (w: World, appId: number, account: string) =>
  [...w.installations.values()].find((i) => i.appId === appId && i.account === account);

/** The installation as webhook payloads carry it (GitHub's examples: times in epoch seconds). */
function webhookInstallation(w: World, inst: FakeInstallation, base: string) {
  const seconds = Math.floor((inst.createdAt ?? w.now()) / 1000);
  return { ...installationView(w, inst, base, base), created_at: seconds, updated_at: seconds };
}

/**
 * Sends one App event to the App's webhook (when it has an active one): one attempt, as GitHub makes,
 * recorded in GET /_fake/apps and in GitHub's record of the App's deliveries (GET /app/hook/deliveries).
 */
function deliverAppEvent(w: World, inst: FakeInstallation, event: AppEventDelivery["event"], action: string, payload: object) {
  const reg = registryOf(w);
  const app = reg.apps.get(inst.appId);
  if (!app?.hook?.active || app.webhook_secret === null) return;
  const body = JSON.stringify(payload);
  const guid = randomUUID();
  const record: AppEventDelivery = {
    guid,
    event,
    action,
    app_id: app.id,
    installation_id: inst.id,
    url: app.hook.url,
    attempts: 0,
    status: null,
    payload,
  };
  reg.deliveries.push(record);
  const headers = deliveryHeaders(event, guid, app.webhook_secret, body, appHookHeaders(w, app.id));
  setTarget(w, appKey(app.id), app.hook.url);
  reg.track(
    deliver(w, { key: appKey(app.id), url: app.hook.url, event, guid, headers, body, payload: body, tally: record }).then(() => {}),
  );
}

function accountsPage(w: World, req: WebRequest, app: FakeManifestApp, targets: string[]): WebAnswer {
  const reg = registryOf(w);
  const state = req.query.get("state");
  const links = targets.map((login) => {
    const q = new URLSearchParams({ target_id: String(reg.accountId(login)), ...(state !== null && { state }) });
    return `<li><a href="${esc(`${req.base}/apps/${app.slug}/installations/new/permissions?${q}`)}">${esc(login)}</a></li>`;
  });
  const body = `<h1>Install ${esc(app.name)}</h1><p>Where do you want to install ${esc(app.name)}?</p><ul>${links.join("")}</ul>`;
  return { status: 200, html: htmlPage(`Install ${app.name}`, body) };
}

function permissionsPage(w: World, req: WebRequest, app: FakeManifestApp, account: string): WebAnswer {
  const reg = registryOf(w);
  const existing = installationOf(w, app.id, account);
  if (existing) return { status: 302, location: `${req.base}/settings/installations/${existing.id}` };
  const state = req.query.get("state");
  const repos = reg.repositoriesOf(account).map((r) => {
    const ref = repositoryRef(reg, r);
    return `<li><label><input type="checkbox" name="repository_ids[]" value="${ref.id}"> ${esc(r)}</label></li>`;
  });
  const permissions = Object.entries(app.permissions).map(([p, level]) => `<li>${esc(`${p}: ${level}`)}</li>`);
  const body =
    `<h1>Install ${esc(app.name)}</h1><p>Install on your ${reg.accountType(account) === "User" ? "personal account" : "organization"} ` +
    `<strong>${esc(account)}</strong></p>` +
    `<h2>Permissions</h2><ul>${permissions.join("") || "<li>No permissions</li>"}</ul>` +
    `<form method="post" action="${esc(`${req.base}/apps/${app.slug}/installations`)}">` +
    `<input type="hidden" name="target_id" value="${reg.accountId(account)}">` +
    (state !== null ? `<input type="hidden" name="state" value="${esc(state)}">` : "") +
    `<fieldset><legend>Repository access</legend>` +
    `<p><label><input type="radio" name="repository_selection" value="all" checked> All repositories</label></p>` +
    `<p><label><input type="radio" name="repository_selection" value="selected"> Only select repositories</label></p>` +
    `<ul>${repos.join("")}</ul></fieldset>` +
    `<button type="submit">Install</button></form>`;
  return { status: 200, html: htmlPage(`Install ${app.name}`, body) };
}

/** The account a `target_id` (or GitHub's `suggested_target_id`) names, if the App may go there. */
function targetAccount(w: World, app: FakeManifestApp, raw: string | null): string | null {
  const reg = registryOf(w);
  const account = raw === null ? null : reg.accountById(Number(raw));
  return account !== null && installTargets(w, reg, app).includes(account) ? account : null;
}

function installPage(w: World, req: WebRequest, slug: string, step: "accounts" | "permissions"): WebAnswer {
  const reg = registryOf(w);
  const app = reg.bySlug(slug);
  if (!app) return problemPage(404, "Not Found", [`There is no GitHub App ${slug}.`]);
  const targets = installTargets(w, reg, app);
  if (step === "accounts" && targets.length > 1) return accountsPage(w, req, app, targets);
  const account =
    step === "accounts" ? targets[0]! : targetAccount(w, app, req.query.get("target_id") ?? req.query.get("suggested_target_id"));
  if (account === null) return problemPage(404, "Not Found", [`${app.name} cannot be installed on that account.`]);
  return permissionsPage(w, req, app, account);
}

/** The form's submission: the installation, its `created` event, and the way on to the setup URL. */
function install(w: World, req: WebRequest, slug: string): WebAnswer {
  const reg = registryOf(w);
  const app = reg.bySlug(slug);
  if (!app) return problemPage(404, "Not Found", [`There is no GitHub App ${slug}.`]);
  const account = targetAccount(w, app, req.form.get("target_id"));
  if (account === null) return problemPage(422, "Installation failed", [`${app.name} cannot be installed on that account.`]);
  if (installationOf(w, app.id, account))
    return problemPage(422, "Installation failed", [`${app.name} is already installed on ${account}.`]);
  const selected = req.form.get("repository_selection") === "selected";
  const ids = new Set(req.form.getAll("repository_ids[]").map(Number));
  const chosen = reg.repositoriesOf(account).filter((r) => ids.has(repositoryRef(reg, r).id));
  if (selected && chosen.length === 0) return problemPage(422, "Installation failed", ["Select at least one repository."]);

  const inst: FakeInstallation = {
    id: w.newId(),
    appId: app.id,
    account,
    repositorySelection: selected ? "selected" : "all",
    ...(selected && { repositories: chosen }),
    permissions: { ...app.permissions },
    events: [...app.events],
    createdAt: w.now(),
  };
  w.installations.set(inst.id, inst);
  const user = simpleUser(reg, reg.webUser.toLowerCase(), req.base, req.base);
  deliverAppEvent(w, inst, "installation", "created", {
    action: "created",
    installation: webhookInstallation(w, inst, req.base),
    repositories: coveredRepositories(w, inst).map((r) => repositoryRef(reg, r)),
    requester: user,
    sender: user,
  });

  const state = req.form.get("state");
  if (!app.setup_url) return { status: 302, location: `${req.base}/settings/installations/${inst.id}` };
  const setup = new URL(app.setup_url);
  setup.searchParams.set("installation_id", String(inst.id));
  setup.searchParams.set("setup_action", "install");
  if (state) setup.searchParams.set("state", state);
  return { status: 302, location: setup.toString() };
}

function installationPage(w: World, id: number): WebAnswer {
  const inst = w.installations.get(id);
  const app = inst ? registryOf(w).apps.get(inst.appId) : undefined;
  if (!inst) return problemPage(404, "Not Found", [`There is no installation ${id}.`]);
  const repos = coveredRepositories(w, inst).map((r) => `<li>${esc(r)}</li>`);
  const access = inst.repositorySelection === "selected" ? "Only select repositories" : "All repositories";
  const body =
    `<h1>${esc(app?.name ?? `App ${inst.appId}`)} is installed on ${esc(inst.account)}</h1>` +
    `<p>Installation ID: ${inst.id}</p><p>Repository access: ${access}</p><ul>${repos.join("")}</ul>`;
  return { status: 200, html: htmlPage("Installed GitHub App", body) };
}

export const installationPages: WebRoute[] = [
  { method: "GET", pattern: /^\/apps\/([^/]+)\/installations\/new$/, handler: (w, req, m) => installPage(w, req, m[1]!, "accounts") },
  {
    method: "GET",
    pattern: /^\/apps\/([^/]+)\/installations\/new\/permissions$/,
    handler: (w, req, m) => installPage(w, req, m[1]!, "permissions"),
  },
  { method: "POST", pattern: /^\/apps\/([^/]+)\/installations$/, handler: (w, req, m) => install(w, req, m[1]!) },
  {
    method: "GET",
    pattern: /^\/(?:organizations\/[^/]+\/)?settings\/installations\/(\d+)$/,
    handler: (w, _req, m) => installationPage(w, Number(m[1])),
  },
];

type ControlAnswer = { status: number; body: unknown };
const refuse = (status: number, message: string): ControlAnswer => ({ status, body: { message: `fake: ${message}` } });

function installationInfo(w: World, inst: FakeInstallation): FakeAppInstallation {
  const view = installationView(w, inst, "", "");
  return {
    id: inst.id,
    app_id: inst.appId,
    account: inst.account,
    target_type: view.target_type,
    repository_selection: view.repository_selection,
    repositories: coveredRepositories(w, inst),
    permissions: view.permissions,
    events: view.events,
  };
}

/** POST /_fake/installations/{id}/repositories {add?, remove?}: the user changes which repositories it covers. */
function changeRepositories(w: World, inst: FakeInstallation, body: Record<string, unknown>, base: string): ControlAnswer {
  const reg = registryOf(w);
  const names = (v: unknown) => (Array.isArray(v) ? v.filter((x): x is string => typeof x === "string").map((x) => x.toLowerCase()) : []);
  const add = names(body.add);
  const remove = names(body.remove);
  const own = reg.repositoriesOf(inst.account);
  const foreign = [...add, ...remove].filter((r) => !own.includes(r));
  if (foreign.length) return refuse(422, `not repositories of ${inst.account} in this world: ${foreign.join(", ")}`);
  if (inst.repositorySelection !== "selected" && add.length)
    return refuse(422, "the installation covers all repositories already; remove some first");
  const before = coveredRepositories(w, inst);
  const added = add.filter((r) => !before.includes(r));
  const removed = remove.filter((r) => before.includes(r));
  const after = [...before.filter((r) => !removed.includes(r)), ...added].sort();
  if (after.length === 0) return refuse(422, "an installation keeps at least one repository: DELETE it instead");
  // Taking repositories away from an "all" installation turns it into a selection, as on GitHub.
  inst.repositorySelection = "selected";
  inst.repositories = after;
  const user = simpleUser(reg, reg.webUser.toLowerCase(), base, base);
  for (const [action, list] of [
    ["added", added],
    ["removed", removed],
  ] as const) {
    if (!list.length) continue;
    deliverAppEvent(w, inst, "installation_repositories", action, {
      action,
      installation: webhookInstallation(w, inst, base),
      repository_selection: "selected",
      repositories_added: action === "added" ? list.map((r) => repositoryRef(reg, r)) : [],
      repositories_removed: action === "removed" ? list.map((r) => repositoryRef(reg, r)) : [],
      requester: user,
      sender: user,
    });
  }
  return { status: 200, body: installationInfo(w, inst) };
}

/** DELETE /_fake/installations/{id}: the user uninstalls the App; its tokens stop working. */
function uninstall(w: World, inst: FakeInstallation, base: string): ControlAnswer {
  const reg = registryOf(w);
  const payload = {
    action: "deleted",
    installation: webhookInstallation(w, inst, base),
    repositories: coveredRepositories(w, inst).map((r) => repositoryRef(reg, r)),
    sender: simpleUser(reg, reg.webUser.toLowerCase(), base, base),
  };
  w.installations.delete(inst.id);
  deliverAppEvent(w, inst, "installation", "deleted", payload);
  return { status: 204, body: null };
}

function appsState(w: World): FakeAppsState {
  const reg = registryOf(w);
  return {
    web_user: reg.webUser,
    apps: [...reg.apps.values()],
    installations: [...w.installations.values()].filter((i) => reg.apps.has(i.appId)).map((i) => installationInfo(w, i)),
    deliveries: reg.deliveries,
  };
}

/** The control routes of Apps made by manifest, or null when `path` is none of them. */
export function appsControl(w: World, method: string, path: string, body: unknown, base: string): ControlAnswer | null {
  const b = (body ?? {}) as Record<string, unknown>;
  if (path === "/_fake/apps" && method === "GET") return { status: 200, body: appsState(w) };
  if (path === "/_fake/web-user" && method === "PUT") {
    if (typeof b.login !== "string" || !/^[A-Za-z0-9-]+$/.test(b.login)) return refuse(400, "login (letters, digits, -) is required");
    registryOf(w).webUser = b.login;
    return { status: 200, body: { login: b.login } };
  }
  const m = /^\/_fake\/installations\/(\d+)(\/repositories)?$/.exec(path);
  if (!m) return null;
  const inst = w.installations.get(Number(m[1]));
  if (!inst) return refuse(404, "no such installation");
  if (m[2] && method === "POST") return changeRepositories(w, inst, b, base);
  if (!m[2] && method === "DELETE") return uninstall(w, inst, base);
  return null;
}
