import { env } from "cloudflare:workers";
import { sign } from "@octokit/webhooks-methods";
import { beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../../src/app";
import { keyringFor } from "../../src/crypto/keyring";
import { open } from "../../src/crypto/secret-box";
import { secretContext } from "../../src/crypto/secret-contexts";
import { countingD1 } from "../../src/db/counting-d1";
import { clearDirectoryCache } from "../../src/intake/directory";
import { receiveDelivery } from "../../src/intake/receive-delivery";
import pkcs1 from "../fixtures/app-key-pkcs1.pem?raw";
import { clone, workflowJobExamples } from "../fixtures/webhook-examples";
import { ADMIN_TOKEN, api, dumpDb, expectRejectedWithoutWrites, unique } from "./helpers";
import { deliver, expectRejected, jobRow, newDeliveryId, type SendOptions, World } from "./webhook-setup";

// GitHub App webhooks: one webhook on the App for every installation, signed with the App's
// secret, naming the installation. A delivery reaches only the entities that act through a
// credential of that installation (and hold the App's secret), and their scale sets.

const APP_ID = 424242;
const INSTALLATION = 3456996; // the installation of GitHub's App-level example payloads
const OTHER_INSTALLATION = 7777777;
const APP_SECRET = "app-webhook-secret-one";
const REPO_HOOK_SECRET = "repo-hook-secret-octocoders";
const ORG_HOOK_SECRET = "org-hook-secret-octocoders";
const OTHER_HOOK_SECRET = "hook-secret-of-outside-repo";

/** GitHub's App-level `queued` example (Octocoders/Hello-World, installation 3456996). */
const appQueued = () => {
  const example = workflowJobExamples.find(
    (e) => e.payload.action === "queued" && e.payload.installation?.id === INSTALLATION && e.payload.repository.name === "Hello-World",
  );
  if (!example) throw new Error("no App-level queued example");
  return clone(example.payload);
};

let jobIds = 880_000;
const job = (labels: string[], over: { repository?: string; installation?: number | null } = {}) => {
  const p = appQueued();
  p.workflow_job.id = ++jobIds;
  p.workflow_job.labels = labels;
  if (over.repository) p.repository.name = over.repository;
  if (over.installation === null) delete p.installation;
  else if (over.installation !== undefined) p.installation.id = over.installation;
  return p;
};

/** The headers an App's webhook delivery carries. */
const fromApp: SendOptions = {
  headers: { "x-github-hook-installation-target-type": "integration", "x-github-hook-installation-target-id": String(APP_ID) },
};

const appCredentials = async (installation: number, webhookSecret: string | undefined) => {
  const res = await api.post("/api/v1/github/credentials", {
    name: unique("app"),
    auth_type: "app",
    app: { app_id: APP_ID, installation_id: installation, private_key: pkcs1, ...(webhookSecret && { webhook_secret: webhookSecret }) },
  });
  expect(res.status, res.text).toBe(201);
  return res.body as { id: string; name: string; has_webhook_secret: boolean };
};

let world: World;
let repoId: string;
let repoSet: string;
let orgSet: string;
let outsideId: string;

beforeAll(async () => {
  world = new World("app");
  const installation = await appCredentials(INSTALLATION, APP_SECRET);
  // The same App installed on another account: the same webhook secret, another installation.
  const other = await appCredentials(OTHER_INSTALLATION, APP_SECRET);
  // Octocoders/Hello-World acts through the App installation and also has its own hook.
  repoId = await world.repository("Octocoders", "Hello-World", REPO_HOOK_SECRET, "github.com", { credentials_name: installation.name });
  repoSet = await world.scaleSet("repositories", repoId, "app-repo", ["self-hosted", "linux"]);
  // Its organization is registered with a PAT and a hook of its own, with a scale set that
  // would win on priority: an App delivery for the repository must not reach it.
  const orgId = await world.organization("Octocoders", ORG_HOOK_SECRET);
  orgSet = await world.scaleSet("organizations", orgId, "app-org", ["self-hosted", "linux"], { priority: 100 });
  // A repository of the same owner that acts through the other installation.
  outsideId = await world.repository("Octocoders", "outside", OTHER_HOOK_SECRET, "github.com", { credentials_name: other.name });
  await world.scaleSet("repositories", outsideId, "app-outside", ["self-hosted", "linux"]);
});

describe("App credentials' webhook secret", () => {
  it("is stored sealed, never returned, shown as has_webhook_secret, rotatable and removable", async () => {
    const secret = "a-fresh-app-webhook-secret";
    const created = await api.post("/api/v1/github/credentials", {
      name: unique("app"),
      auth_type: "app",
      app: { app_id: 99, installation_id: 98, private_key: pkcs1, webhook_secret: secret },
    });
    expect(created.status, created.text).toBe(201);
    expect(created.body.has_webhook_secret).toBe(true);
    const id = created.body.id as string;
    const row = await dumpDb();
    const stored = (row.github_credentials as { id: string; webhook_secret_enc: string | null }[]).find((r) => r.id === id)!;
    expect(stored.webhook_secret_enc).toBeTruthy();
    expect(stored.webhook_secret_enc).not.toContain(secret);

    const rotated = await api.put(`/api/v1/github/credentials/${id}`, { app: { webhook_secret: "a-rotated-app-webhook-secret" } });
    expect(rotated.status, rotated.text).toBe(200);
    expect(rotated.body.has_webhook_secret).toBe(true);
    const shown = await api.get(`/api/v1/github/credentials/${id}`);
    const listed = await api.get("/api/v1/github/credentials");
    for (const text of [created.text, rotated.text, shown.text, listed.text]) {
      expect(text).not.toContain(secret);
      expect(text).not.toContain("a-rotated-app-webhook-secret");
    }

    const removed = await api.put(`/api/v1/github/credentials/${id}`, { app: { webhook_secret: null } });
    expect(removed.status, removed.text).toBe(200);
    expect(removed.body.has_webhook_secret).toBe(false);
    expect(removed.body.app_id).toBe(99);
  });

  it("is re-sealed by key rotation like every other secret", async () => {
    const creds = await appCredentials(4242, "rotate-this-app-secret");
    const newKey = btoa(String.fromCharCode(...new Uint8Array(32).fill(9)));
    const rotate = new Request("https://edgerunner.test/api/v1/secrets/rotate", {
      method: "POST",
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    });
    const rotateTo = (key: string, previous: string) =>
      createApp().fetch(rotate.clone(), { ...env, ENCRYPTION_KEY: key, ENCRYPTION_KEYS_PREVIOUS: previous });
    const res = await rotateTo(newKey, env.ENCRYPTION_KEY);
    expect(res.status, await res.clone().text()).toBe(200);
    const row = await env.DB.prepare("SELECT webhook_secret_enc AS v FROM github_credentials WHERE id = ?")
      .bind(creds.id)
      .first<{ v: string }>();
    const newOnly = await keyringFor({ ENCRYPTION_KEY: newKey });
    expect(await open(newOnly, row!.v, secretContext.appWebhookSecret(creds.id))).toBe("rotate-this-app-secret");
    // Back to the key the rest of this file runs with.
    expect((await rotateTo(env.ENCRYPTION_KEY, newKey)).status).toBe(200);
  });

  it("is refused on PAT credentials and when too short, without writing", async () => {
    const pat = await api.post("/api/v1/github/credentials", { name: unique("pat"), auth_type: "pat", pat: { oauth2_token: "ghp_x" } });
    await expectRejectedWithoutWrites(400, () =>
      api.put(`/api/v1/github/credentials/${pat.body.id}`, { app: { webhook_secret: "long-enough-secret" } }),
    );
    await expectRejectedWithoutWrites(400, () =>
      api.post("/api/v1/github/credentials", {
        name: unique("pat"),
        auth_type: "pat",
        pat: { oauth2_token: "ghp_x", webhook_secret: "long-enough-secret" },
      }),
    );
    await expectRejectedWithoutWrites(400, () =>
      api.post("/api/v1/github/credentials", {
        name: unique("app"),
        auth_type: "app",
        app: { app_id: 1, installation_id: 2, private_key: pkcs1, webhook_secret: "short" },
      }),
    );
  });
});

describe("deliveries of an App's webhook", () => {
  it("routes a delivery signed with the App's secret to the entity of its installation, never to the organization's scale sets", async () => {
    const p = job(["self-hosted", "linux"]);
    const res = await deliver(p, APP_SECRET, fromApp);
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ job_id: p.workflow_job.id, status: "queued", matched: true, scale_set_id: repoSet });
    expect(await jobRow(p.workflow_job.id)).toMatchObject({ entity_id: repoId, scale_set_id: repoSet });
  });

  it("401 for a delivery signed with another secret, and nothing stored", async () => {
    await expectRejected(401, "bad_signature", () => deliver(job(["self-hosted", "linux"]), "not-the-app-secret", fromApp));
  });

  it("does not take the App's secret for a payload without an installation (a per-entity hook's shape)", async () => {
    await expectRejected(401, "bad_signature", () => deliver(job(["self-hosted", "linux"], { installation: null }), APP_SECRET));
  });

  it("routes nothing for another installation of the same App: 202 ignored, nothing stored", async () => {
    const p = job(["self-hosted", "linux"], { installation: OTHER_INSTALLATION });
    const before = await dumpDb();
    const res = await deliver(p, APP_SECRET, fromApp);
    expect(res.status, res.text).toBe(202);
    expect(res.body.ignored).toBe(true);
    expect(await dumpDb()).toEqual(before);
  });

  it("routes nothing for a repository outside the installation (registered through another, or not at all)", async () => {
    for (const repository of ["outside", "never-registered"]) {
      const p = job(["self-hosted", "linux"], { repository });
      const before = await dumpDb();
      const res = await deliver(p, APP_SECRET, fromApp);
      expect(res.status, res.text).toBe(202);
      expect(res.body.ignored).toBe(true);
      expect(await dumpDb()).toEqual(before);
    }
  });

  it("401 for a delivery signed by an App we hold no secret of", async () => {
    await expectRejected(401, "bad_signature", () =>
      deliver(job(["self-hosted", "linux"], { installation: 1 }), "secret-of-an-app-we-do-not-know", fromApp),
    );
  });

  it("answers the App's ping (no repository, the App's id) with 200 and stores nothing", async () => {
    const ping = {
      zen: "Design for failure.",
      hook_id: 1,
      hook: {
        type: "App",
        id: 1,
        name: "web",
        active: true,
        events: ["workflow_job"],
        config: { content_type: "json", url: "https://edgerunner.test/webhooks/github" },
        app_id: APP_ID,
      },
    };
    const before = await dumpDb();
    const res = await deliver(ping, APP_SECRET, { ...fromApp, event: "ping" });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ pong: true, entity: null, credentials: { app_id: APP_ID } });
    expect(await dumpDb()).toEqual(before);
    await expectRejected(401, "unknown_entity", () => deliver(ping, "not-the-app-secret", { ...fromApp, event: "ping" }));
  });
});

describe("both set-ups at once", () => {
  it("takes the entity's own hook and the App's webhook for the same repository, and one job row results", async () => {
    const p = job(["self-hosted", "linux"]);
    const viaHook = clone(p);
    delete viaHook.installation;
    const hook = await deliver(viaHook, REPO_HOOK_SECRET);
    expect(hook.status, hook.text).toBe(200);
    expect(hook.body.scale_set_id).toBe(repoSet);
    const viaApp = await deliver(p, APP_SECRET, fromApp);
    expect(viaApp.status, viaApp.text).toBe(200);
    expect(viaApp.body.scale_set_id).toBe(repoSet);
    const rows = await dumpDb();
    expect((rows.jobs as { id: number }[]).filter((j) => j.id === p.workflow_job.id)).toHaveLength(1);
  });

  it("keeps per-entity hooks signer-scoped: the organization's hook still feeds only the organization", async () => {
    const p = job(["self-hosted", "linux"]);
    delete p.installation;
    const res = await deliver(p, ORG_HOOK_SECRET);
    expect(res.status, res.text).toBe(200);
    expect(res.body.scale_set_id).toBe(orgSet);
  });

  it("a new App secret works at once, the old one stops, and removing it ends App deliveries", async () => {
    const creds = await appCredentials(5555, "first-app-secret-x");
    const repo = await world.repository("Octocoders", "rotating", "rotating-repo-hook-secret", "github.com", {
      credentials_name: creds.name,
    });
    const set = await world.scaleSet("repositories", repo, "app-rotating", ["self-hosted", "linux"]);
    // A second repository of the installation that receives nothing until the secret is removed
    // (so no isolate has its directory cached, which may serve a removed secret for a few seconds).
    await world.repository("Octocoders", "rotating-2", "rotating-2-repo-hook-secret", "github.com", { credentials_name: creds.name });
    const send = (secret: string, repository = "rotating") =>
      deliver(job(["self-hosted", "linux"], { repository, installation: 5555 }), secret, fromApp);
    expect((await send("first-app-secret-x")).body.scale_set_id).toBe(set);

    expect((await api.put(`/api/v1/github/credentials/${creds.id}`, { app: { webhook_secret: "second-app-secret-y" } })).status).toBe(200);
    const renewed = await send("second-app-secret-y");
    expect(renewed.status, renewed.text).toBe(200);
    expect(renewed.body.scale_set_id).toBe(set);
    await expectRejected(401, "bad_signature", () => send("first-app-secret-x"));

    expect((await api.put(`/api/v1/github/credentials/${creds.id}`, { app: { webhook_secret: null } })).status).toBe(200);
    // The entity's own hook keeps working.
    const own = job(["self-hosted", "linux"], { repository: "rotating", installation: null });
    expect((await deliver(own, "rotating-repo-hook-secret")).body.scale_set_id).toBe(set);
    await expectRejected(401, "bad_signature", () => send("second-app-secret-y", "rotating-2"));
  });
});

describe("an extra App of a credential pool", () => {
  // A second App installed on Octocoders, whose credentials are only in Octocoders/Hello-World's
  // pool: it mints JIT configs, while the entity's own App (or hook) delivers its jobs. GitHub
  // sends each App's webhook its own copy of every workflow_job, so taking the extra App's as
  // well would only repeat them: they route nowhere, and are answered as any App delivery about
  // nothing it serves (202, so GitHub's log shows no failures).
  const EXTRA_APP_ID = 515151;
  const EXTRA_INSTALLATION = 6060606;
  const EXTRA_SECRET = "extra-app-webhook-secret";

  it("a delivery its webhook signs routes nothing: 202 ignored, nothing stored; without its secret here, 401", async () => {
    const withSecret = await api.post("/api/v1/github/credentials", {
      name: unique("extra-app"),
      auth_type: "app",
      app: { app_id: EXTRA_APP_ID, installation_id: EXTRA_INSTALLATION, private_key: pkcs1, webhook_secret: EXTRA_SECRET },
    });
    expect(withSecret.status, withSecret.text).toBe(201);
    const pooled = await api.put(`/api/v1/repositories/${repoId}`, { pool_credentials: [withSecret.body.name] });
    expect(pooled.status, pooled.text).toBe(200);
    const fromExtraApp: SendOptions = {
      headers: { "x-github-hook-installation-target-type": "integration", "x-github-hook-installation-target-id": String(EXTRA_APP_ID) },
    };

    const p = job(["self-hosted", "linux"], { installation: EXTRA_INSTALLATION });
    const before = await dumpDb();
    const res = await deliver(p, EXTRA_SECRET, fromExtraApp);
    expect(res.status, res.text).toBe(202);
    expect(res.body.ignored).toBe(true);
    expect(await dumpDb()).toEqual(before);
    // The same job through the entity's own App still reaches its scale set.
    const own = job(["self-hosted", "linux"]);
    expect((await deliver(own, APP_SECRET, fromApp)).body.scale_set_id).toBe(repoSet);

    // Without the extra App's webhook secret stored, its deliveries are not ours to verify.
    expect((await api.put(`/api/v1/github/credentials/${withSecret.body.id}`, { app: { webhook_secret: null } })).status).toBe(200);
    clearDirectoryCache();
    await expectRejected(401, "bad_signature", () =>
      deliver(job(["self-hosted", "linux"], { installation: EXTRA_INSTALLATION }), EXTRA_SECRET, fromExtraApp),
    );
    expect((await api.put(`/api/v1/repositories/${repoId}`, { pool_credentials: [] })).status).toBe(200);
  });
});

describe("cost", () => {
  /** D1 round trips one delivery takes through the intake pipeline, with nothing cached. */
  const roundTrips = async (payload: unknown, secret: string) => {
    const body = JSON.stringify(payload);
    const trips = { n: 0 };
    clearDirectoryCache();
    const outcome = await receiveDelivery(
      { ...env, DB: countingD1(env.DB, trips) },
      {
        id: newDeliveryId(),
        event: "workflow_job",
        signature: await sign(secret, body),
        enterpriseHost: null,
        contentType: "application/json",
        body: new TextEncoder().encode(body),
        receivedAt: Date.now(),
        retentionDays: 3650, // GitHub's examples are of 2021
      },
    );
    expect(outcome.kind).toBe("accepted");
    return trips.n;
  };

  it("an App delivery takes the D1 round trips of a hook delivery, however many App credentials there are", async () => {
    const viaHook = await roundTrips(job(["self-hosted", "linux"], { installation: null }), REPO_HOOK_SECRET);
    const viaApp = await roundTrips(job(["self-hosted", "linux"]), APP_SECRET);
    for (let i = 0; i < 8; i++) await appCredentials(9_000 + i, APP_SECRET);
    const viaManyApps = await roundTrips(job(["self-hosted", "linux"]), APP_SECRET);
    expect(viaHook).toBe(2); // the directory read, the delivery's write batch
    expect(viaApp).toBe(viaHook);
    expect(viaManyApps).toBe(viaApp);
  });
});
