/**
 * The GitHub App manifest flow, GitHub's side (Node only: it makes RSA keys). A site posts a
 * form with a `manifest` field (JSON) to
 *
 *   POST {web}/settings/apps/new?state=S                       an App owned by the signed-in user
 *   POST {web}/organizations/{org}/settings/apps/new?state=S   an App owned by the organization
 *
 * and the fake answers what GitHub does: a 422 page "Invalid GitHub App configuration" listing
 * what is wrong (manifest-check.ts), or a page "Create GitHub App for <owner>" with the name
 * (editable), permissions, events and webhook, and a button "Create GitHub App". That button
 * posts the same form back with `confirm=1`: the App is made (id, slug, client id and secret, a
 * webhook secret when its hook is active, a 2048-bit RSA key handed out as PKCS#1 PEM) and the
 * browser goes to `redirect_url?code=C&state=S`; the site trades the code, once and within the
 * hour, at POST /app-manifests/{code}/conversions (rest.ts). Without a redirect_url, to the
 * App's page {web}/settings/apps/{slug}.
 */
import { generateKeyPair, randomBytes } from "node:crypto";
import { promisify } from "node:util";
import { importPublicKey } from "../jwt.ts";
import type { FakeManifestApp } from "../types.ts";
import { esc, htmlPage, problemPage, type WebAnswer, type WebRequest, type WebRoute } from "../web-page.ts";
import type { World } from "../world.ts";
import { checkManifest, type Manifest, nameProblems, slugOf } from "./manifest-check.ts";
import { CODE_TTL_MS, registryOf } from "./registry.ts";
import { nodeId } from "./rest.ts";

const generateRsaKeyPair = promisify(generateKeyPair);

const INVALID = "Invalid GitHub App configuration";
const INVALID_LEAD = "The configuration does not appear to be a valid GitHub App manifest.";

const ALPHANUMERIC = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
const randomAlphanumeric = (n: number) => Array.from(randomBytes(n), (b) => ALPHANUMERIC[b % ALPHANUMERIC.length]).join("");
const randomHex = (bytes: number) => randomBytes(bytes).toString("hex");
const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z");

/** Registers the App in the world: its public key verifies its JWTs from now on. */
async function createApp(w: World, manifest: Manifest, name: string, owner: FakeManifestApp["owner"]): Promise<FakeManifestApp> {
  const { publicKey, privateKey } = await generateRsaKeyPair("rsa", {
    modulusLength: 2048,
    publicKeyEncoding: { type: "spki", format: "pem" },
    privateKeyEncoding: { type: "pkcs1", format: "pem" },
  });
  const id = w.newId();
  const hook = manifest.hook_attributes
    ? { url: manifest.hook_attributes.url ?? "", active: manifest.hook_attributes.active !== false }
    : null;
  const app: FakeManifestApp = {
    id,
    slug: slugOf(name),
    name: name.trim(),
    node_id: nodeId("Integration", id),
    // New GitHub Apps get client ids like "Iv23li" and 14 more letters and digits.
    client_id: `Iv23li${randomAlphanumeric(14)}`,
    client_secret: randomHex(20),
    // GitHub makes the webhook secret itself; the conversion answers null when there is no active hook.
    webhook_secret: hook?.active ? randomHex(20) : null,
    pem: privateKey,
    owner,
    description: manifest.description ?? null,
    url: manifest.url,
    hook,
    hook_id: w.newId(),
    redirect_url: manifest.redirect_url ?? null,
    setup_url: manifest.setup_url ?? null,
    setup_on_update: manifest.setup_on_update === true,
    callback_urls: manifest.callback_urls ?? [],
    public: manifest.public === true,
    permissions: manifest.default_permissions ?? {},
    events: manifest.default_events ?? [],
    created_at: iso(w.now()),
  };
  w.apps.set(id, { id, clientId: app.client_id, key: await importPublicKey(publicKey) });
  registryOf(w).apps.set(id, app);
  return app;
}

/** Where the browser goes once the App exists: the site's redirect_url with a fresh code (and its state). */
function afterCreation(w: World, app: FakeManifestApp, state: string | null, base: string): WebAnswer {
  if (!app.redirect_url) return { status: 302, location: `${base}/settings/apps/${app.slug}` };
  const code = randomHex(20);
  registryOf(w).codes.set(code, { appId: app.id, expiresAt: w.now() + CODE_TTL_MS });
  const target = new URL(app.redirect_url);
  target.searchParams.set("code", code);
  if (state !== null) target.searchParams.set("state", state);
  return { status: 302, location: target.toString() };
}

const list = (items: string[], empty: string) =>
  items.length ? `<ul>${items.map((i) => `<li>${esc(i)}</li>`).join("")}</ul>` : `<p>${esc(empty)}</p>`;

/** GitHub's confirmation page: the owner, the name to keep or change, what the App asks for, and the button. */
function confirmationPage(req: WebRequest, manifest: Manifest, owner: string): WebAnswer {
  const action = `${req.base}${req.path}${req.query.size ? `?${req.query}` : ""}`;
  const permissions = Object.entries(manifest.default_permissions ?? {}).map(([p, level]) => `${p}: ${level}`);
  const hook = manifest.hook_attributes;
  const webhook = !hook ? "No webhook" : `${hook.url ?? ""} (${hook.active === false ? "inactive" : "active"})`;
  const body =
    `<h1>Create GitHub App for <span>${esc(owner)}</span></h1>` +
    `<form method="post" action="${esc(action)}">` +
    `<input type="hidden" name="manifest" value="${esc(req.form.get("manifest") ?? "")}">` +
    `<input type="hidden" name="confirm" value="1">` +
    `<p><label>GitHub App name <input name="name" required maxlength="34" value="${esc(manifest.name ?? "")}"></label></p>` +
    `<p>Homepage URL: ${esc(manifest.url)}</p>` +
    (manifest.description ? `<p>${esc(manifest.description)}</p>` : "") +
    `<h2>Permissions</h2>${list(permissions, "No permissions")}` +
    `<h2>Events</h2>${list(manifest.default_events ?? [], "No events")}` +
    `<h2>Webhook</h2><p>${esc(webhook)}</p>` +
    `<p>Where can this GitHub App be installed? ${manifest.public ? "Any account" : "Only on this account"}</p>` +
    `<button type="submit">Create GitHub App</button></form>`;
  return { status: 200, html: htmlPage(`Create GitHub App for ${owner}`, body) };
}

/** Both form targets: check, confirm, then create. `org` is null for the signed-in user's own App. */
async function manifestForm(w: World, req: WebRequest, org: string | null): Promise<WebAnswer> {
  const reg = registryOf(w);
  if (org !== null && !w.orgs.has(org)) return problemPage(404, "Not Found", [`There is no organization ${org}.`]);
  const checked = checkManifest(req.form.get("manifest"));
  if (!checked.ok) return problemPage(422, INVALID, [INVALID_LEAD, ...checked.problems.map((p) => `Error: ${p}`)]);
  const owner = org ?? reg.webUser.toLowerCase();
  if (req.form.get("confirm") !== "1") return confirmationPage(req, checked.manifest, owner);
  const name = req.form.get("name") ?? checked.manifest.name ?? "";
  const problems = nameProblems(name, {
    slugs: [...reg.apps.values()].map((a) => a.slug),
    accounts: [reg.webUser.toLowerCase(), ...w.orgs],
    owner,
  });
  if (problems.length) return problemPage(422, INVALID, problems);
  const app = await createApp(w, checked.manifest, name, { login: owner, type: org === null ? "User" : "Organization" });
  return afterCreation(w, app, req.query.get("state"), req.base);
}

/** The App's own page (where GitHub lands without a redirect_url): what it is, and where to install it. */
function appPage(w: World, req: WebRequest, slug: string): WebAnswer {
  const app = registryOf(w).bySlug(slug);
  if (!app) return problemPage(404, "Not Found", [`There is no GitHub App ${slug}.`]);
  const body =
    `<h1>${esc(app.name)}</h1><p>Owned by ${esc(app.owner.login)}. App ID: ${app.id}. Client ID: ${esc(app.client_id)}.</p>` +
    `<p><a href="${esc(`${req.base}/apps/${app.slug}/installations/new`)}">Install App</a></p>`;
  return { status: 200, html: htmlPage(app.name, body) };
}

export const manifestPages: WebRoute[] = [
  { method: "POST", pattern: /^\/settings\/apps\/new$/, handler: (w, req) => manifestForm(w, req, null) },
  {
    method: "POST",
    pattern: /^\/organizations\/([^/]+)\/settings\/apps\/new$/,
    handler: (w, req, m) => manifestForm(w, req, decodeURIComponent(m[1]!).toLowerCase()),
  },
  { method: "GET", pattern: /^\/settings\/apps\/([^/]+)$/, handler: (w, req, m) => appPage(w, req, decodeURIComponent(m[1]!)) },
];
