/**
 * "Secrets are never returned", checked from the reader's side: credentials (a PAT, a GitHub App
 * with its key and webhook secret), entities with webhook secrets, a provider with its secret
 * and an API token are written through the API, webhooks installed, a secret rotated; then every
 * GET route of the OpenAPI document, the dashboard's pages and /metrics are read with the
 * ADMIN_TOKEN, a dashboard session and Cloudflare Access identities (admin and read), and no
 * secret, nor its base64, may appear in any answer.
 */
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, inject, it } from "vitest";
import { keyringFor } from "../../src/crypto/keyring";
import { open } from "../../src/crypto/secret-box";
import { secretContext } from "../../src/crypto/secret-contexts";
import { createTenant } from "../fake-shim/control";
import { accessEnv, accessJwt, send } from "./access-helpers";
import { APP_ID, appKeyPkcs1, createEndpoint, INSTALLATION_ID, newWorld } from "./github-helpers";
import { api, insertInstance, seed, unique } from "./helpers";
import { attr, createAppAtGithub, postForm, sessionWithCsrf } from "./setup-helpers";
import { login, ui } from "./ui-helpers";

const random = () => crypto.randomUUID().replaceAll("-", "");

/** The secrets the test writes. */
const written = {
  pat: `ghp_${random()}`,
  rotatedPat: `ghp_${random()}`,
  appPrivateKey: appKeyPkcs1,
  appWebhookSecret: `app-hook-${random()}`,
  repoWebhookSecret: `repo-hook-${random()}`,
  orgWebhookSecret: `org-hook-${random()}`,
  rotatedOrgWebhookSecret: `org-hook-2-${random()}`,
  enterpriseWebhookSecret: `ent-hook-${random()}`,
  providerSecret: `provider-${random()}`,
};
/** Every secret that must not come back, by what it is: those written and those minted on the way. */
const secrets: Record<string, string> = { ...written };

const bytesToBase64 = (bytes: Uint8Array) => btoa(String.fromCharCode(...bytes));

/**
 * The ways a secret could show up: as it is, JSON-escaped, each line of a PEM body, and base64
 * (standard and URL-safe) at each of the three alignments it could have inside a longer base64
 * text (the groups shared with neighbouring bytes are cut off).
 */
function forms(secret: string): string[] {
  const out = [secret, JSON.stringify(secret).slice(1, -1)];
  out.push(...secret.split("\n").filter((line) => line.length >= 32 && !line.startsWith("-----")));
  const bytes = new TextEncoder().encode(secret);
  for (const lead of [0, 1, 2]) {
    const b64 = bytesToBase64(new Uint8Array([...new Uint8Array(lead), ...bytes]));
    const inner = b64.slice(lead ? 4 : 0, -4);
    out.push(inner, inner.replaceAll("+", "-").replaceAll("/", "_"));
  }
  return out;
}

interface Answer {
  who: string;
  path: string;
  status: number;
  text: string;
}

function expectNoSecrets(answers: Answer[]) {
  const leaks = answers.flatMap((a) =>
    Object.entries(secrets).flatMap(([what, secret]) =>
      forms(secret).some((f) => a.text.includes(f)) ? [`${a.who} GET ${a.path}: ${what}`] : [],
    ),
  );
  expect(leaks).toEqual([]);
}

const ids = {} as {
  endpoint: string;
  patCreds: string;
  appCreds: string;
  repo: string;
  org: string;
  enterprise: string;
  provider: string;
  scaleSet: string;
  instance: string;
  token: string;
  githubApp: string;
};

beforeAll(async () => {
  const world = await newWorld();
  await world.seed({
    pats: [
      { token: written.pat, login: "octocat" },
      { token: written.rotatedPat, login: "octocat" },
    ],
  });
  ids.endpoint = await createEndpoint(world);
  const created = async (path: string, body: unknown) => {
    const res = await api.post(path, body);
    if (res.status !== 201) throw new Error(`${path}: ${res.status} ${res.text}`);
    return res.body;
  };
  const pat = await created("/api/v1/github/credentials", {
    name: unique("pat"),
    endpoint: ids.endpoint,
    auth_type: "pat",
    pat: { oauth2_token: written.pat },
  });
  const app = await created("/api/v1/github/credentials", {
    name: unique("app"),
    endpoint: ids.endpoint,
    auth_type: "app",
    app: { app_id: APP_ID, installation_id: INSTALLATION_ID, private_key: written.appPrivateKey, webhook_secret: written.appWebhookSecret },
  });
  [ids.patCreds, ids.appCreds] = [pat.id, app.id];
  ids.repo = (
    await created("/api/v1/repositories", {
      owner: "octo",
      name: "app",
      credentials_name: pat.name,
      webhook_secret: written.repoWebhookSecret,
    })
  ).id;
  ids.org = (
    await created("/api/v1/organizations", { name: "octo", credentials_name: app.name, webhook_secret: written.orgWebhookSecret })
  ).id;
  ids.enterprise = (
    await created("/api/v1/enterprises", { name: "acme", credentials_name: pat.name, webhook_secret: written.enterpriseWebhookSecret })
  ).id;
  // Writes whose bodies carry secrets, for the audit trail; the hooks then hold the secrets at GitHub.
  expect((await api.put(`/api/v1/github/credentials/${pat.id}`, { pat: { oauth2_token: written.rotatedPat } })).status).toBe(200);
  expect((await api.put(`/api/v1/organizations/${ids.org}`, { webhook_secret: written.rotatedOrgWebhookSecret })).status).toBe(200);
  expect((await api.post(`/api/v1/repositories/${ids.repo}/webhook`)).status).toBe(201);
  expect((await api.post(`/api/v1/organizations/${ids.org}/webhook`)).status).toBe(201);
  expect((await world.state()).hooks.map((h) => h.config.secret).sort()).toEqual(
    [written.repoWebhookSecret, written.rotatedOrgWebhookSecret].sort(),
  );
  // The installation token the App minted on the way is a secret too.
  const state = await env.DB.prepare("SELECT token_enc FROM github_credential_state WHERE credential_id = ?")
    .bind(app.id)
    .first<{ token_enc: string }>();
  secrets.installationToken = await open(await keyringFor(env), state!.token_enc, secretContext.installationToken(app.id));

  // A shim that answers (the setup check at GET /doctor and /ui/doctor calls it), signing with the secret.
  const shim = await createTenant(inject("fakeShimUrl"), { secret: written.providerSecret });
  const provider = await seed.provider({ url: shim.url, secret: written.providerSecret });
  ids.provider = provider.name;
  ids.scaleSet = (await seed.scaleSet(`repositories/${ids.repo}`, { provider_name: provider.name })).id;
  ids.instance = (await insertInstance(ids.scaleSet)).name;
  // A GitHub App made on the first-run page (GitHub's manifest flow on the fake), installed on octo:
  // its key, webhook secret and client secret came from GitHub and went straight into D1.
  const web = unique("web");
  expect((await api.post("/api/v1/github/endpoints", { name: web, base_url: world.url, api_base_url: world.url })).status).toBe(201);
  const session = await sessionWithCsrf();
  const { back } = await createAppAtGithub(session, web, `Edgerunner ${unique("s")}`.slice(0, 34));
  expect((await ui("GET", back, { cookie: session.cookie })).status).toBe(303);
  const made = (await world.apps()).apps.at(-1)!;
  Object.assign(secrets, { madeAppPem: made.pem, madeAppWebhookSecret: made.webhook_secret!, madeAppClientSecret: made.client_secret });
  ids.githubApp = (await api.get("/api/v1/github/apps")).body.find((a: { app_id: number }) => a.app_id === made.id).id;
  const installPage = await (await fetch(`${world.url}/apps/${made.slug}/installations/new`)).text();
  const target = attr(installPage, /name="target_id" value="(\d+)"/);
  const installed = await postForm(`${world.url}/apps/${made.slug}/installations`, { target_id: target, repository_selection: "all" });
  const setupUrl = new URL(installed.headers.get("location")!);
  expect((await ui("GET", `${setupUrl.pathname}${setupUrl.search}`, { cookie: session.cookie })).status).toBe(303);

  const token = await created("/api/v1/tokens", { name: unique("reader"), scope: "read" });
  ids.token = token.id;
  // Shown once when created; never again.
  secrets.apiToken = token.token;
  expect((await api.post("/api/v1/secrets/rotate")).status).toBe(200);
});

/** Every GET route of the OpenAPI document (admin security), filled with the resources above. */
async function getPaths(): Promise<string[]> {
  const doc = (await api.get("/api/v1/openapi.json", { token: null })).body;
  const templates = Object.entries(doc.paths as Record<string, Record<string, any>>)
    .filter(([, ops]) => ops.get && ops.get.security === undefined)
    .map(([path]) => path);
  const entities = [
    ["repositories", ids.repo],
    ["organizations", ids.org],
    ["enterprises", ids.enterprise],
  ] as const;
  const filled: Record<string, string[]> = {
    "/api/v1/github/endpoints/{name}": [ids.endpoint, "github.com"].map((n) => `/api/v1/github/endpoints/${n}`),
    "/api/v1/github/credentials/{id}": [ids.patCreds, ids.appCreds].map((id) => `/api/v1/github/credentials/${id}`),
    ...Object.fromEntries(entities.map(([kind, id]) => [`/api/v1/${kind}/{id}`, [`/api/v1/${kind}/${id}`]])),
    ...Object.fromEntries(entities.map(([kind, id]) => [`/api/v1/${kind}/{id}/scalesets`, [`/api/v1/${kind}/${id}/scalesets`]])),
    "/api/v1/repositories/{id}/webhook": [`/api/v1/repositories/${ids.repo}/webhook`],
    "/api/v1/organizations/{id}/webhook": [`/api/v1/organizations/${ids.org}/webhook`],
    // None here: this enterprise is GitHub's, which has no webhook API (400). A Gitea instance's
    // system hook is shown without its secret in gitea-scaleset.test.ts.
    "/api/v1/enterprises/{id}/webhook": [],
    "/api/v1/providers/{name}": [`/api/v1/providers/${ids.provider}`],
    "/api/v1/github/apps/{id}": [`/api/v1/github/apps/${ids.githubApp}`],
    "/api/v1/scalesets/{id}": [`/api/v1/scalesets/${ids.scaleSet}`],
    "/api/v1/scalesets/{id}/instances": [`/api/v1/scalesets/${ids.scaleSet}/instances`],
    "/api/v1/instances/{name}": [`/api/v1/instances/${ids.instance}`],
    "/api/v1/audit": ["/api/v1/audit?limit=500"],
  };
  const unfilled = templates.filter((t) => t.includes("{") && !filled[t]);
  expect(unfilled).toEqual([]);
  return [...templates.flatMap((t) => filled[t] ?? [t]), "/api/v1/openapi.json"];
}

const PAGES = () => ["/ui", "/ui/jobs", "/ui/audit", "/ui/doctor", "/ui/setup", "/ui/setup?check=1", `/ui/scalesets/${ids.scaleSet}`];

describe("secrets are never returned", () => {
  it("by any GET route, to the ADMIN_TOKEN, /metrics' token or a dashboard session", async () => {
    const answers: Answer[] = [];
    for (const path of await getPaths()) {
      const res = await api.get(path);
      expect(res.status, `${path} ${res.text}`).toBe(200);
      answers.push({ who: "admin token", path, status: res.status, text: res.text });
    }
    expect(answers.find((a) => a.path.startsWith("/api/v1/audit"))!.text).toContain("[redacted]");
    const metrics = await api.get("/metrics", { token: "test-metrics-token" });
    expect(metrics.status).toBe(200);
    answers.push({ who: "metrics token", path: "/metrics", status: metrics.status, text: metrics.text });
    const { cookie } = await login();
    for (const path of PAGES()) {
      const page = await ui("GET", path, { cookie: cookie! });
      expect(page.status, path).toBe(200);
      answers.push({ who: "dashboard session", path, status: page.status, text: page.html });
    }
    expectNoSecrets(answers);
  });

  it.each([
    ["admin", accessEnv()],
    ["read", accessEnv({ ACCESS_SCOPE: "read" })],
  ])("by any GET route or dashboard page, to a Cloudflare Access identity (%s)", async (scope, accessed) => {
    const jwt = await accessJwt({ email: `${scope}@example.com` });
    const answers: Answer[] = [];
    for (const path of [...(await getPaths()), ...PAGES()]) {
      const res = await send("GET", path, { jwt, env: accessed });
      // API tokens are for admins only: a read identity is refused them.
      const expected = scope === "read" && path.startsWith("/api/v1/tokens") ? 403 : 200;
      expect(res.status, `${path} ${res.text}`).toBe(expected);
      answers.push({ who: `access ${scope}`, path, status: res.status, text: res.text });
    }
    expectNoSecrets(answers);
  });
});
