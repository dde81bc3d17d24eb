/**
 * Stored credentials go only to the API URL they were created for (src/github/credential-binding.ts):
 * the endpoint row is changed behind the admin API's back, straight in D1, and every path that
 * would carry a credential's secret (PAT, App JWT and installation token, registration token
 * for the Actions service, an entity's webhook secret) refuses before anything is sent.
 */
import { env } from "cloudflare:workers";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { AdminTokens } from "../../src/github/actions-service/admin-token";
import { ActionsServiceClient } from "../../src/github/actions-service/client";
import { GithubCredentialElsewhereError } from "../../src/github/errors";
import { listRunners } from "../../src/github/runners";
import type { FakeWorld } from "../fake-github/control-client";
import { client, createAppCredential, createEndpoint, createPatCredential, newWorld, TestClock } from "./github-helpers";
import { api, expectRejectedWithoutWrites } from "./helpers";

const org = { kind: "organization", org: "octo" } as const;

async function boundApiUrl(credentialId: string): Promise<string | null> {
  const row = await env.DB.prepare("SELECT bound_api_url FROM github_credentials WHERE id = ?")
    .bind(credentialId)
    .first<{ bound_api_url: string | null }>();
  return row!.bound_api_url;
}

/** What an operator's mistake, a raced write or a hand edit could leave: the endpoint pointing elsewhere. */
async function moveEndpointInD1(endpoint: string, apiBaseUrl: string) {
  await env.DB.prepare("UPDATE github_endpoints SET api_base_url = ? WHERE name = ?").bind(apiBaseUrl, endpoint).run();
}

/** Every request either world saw, REST and Actions service alike. */
async function seen(...worlds: FakeWorld[]) {
  const all = await Promise.all(worlds.map(async (w) => [...(await w.requests()), ...(await w.actionsState()).requests]));
  return all.flat();
}

let errors: string[];
beforeEach(() => {
  errors = [];
  vi.spyOn(console, "error").mockImplementation((line: unknown) => void errors.push(String(line)));
});
afterEach(() => vi.restoreAllMocks());

const refusals = () => errors.map((l) => JSON.parse(l)).filter((e) => e.event === "github_credentials_elsewhere_refused");

describe("credentials bound to their API URL", () => {
  it("records the endpoint's API URL when credentials are created", async () => {
    const world = await newWorld();
    const ghes = await createEndpoint(world, true);
    expect(await boundApiUrl(await createPatCredential(ghes))).toBe(world.ghesUrl);
    const created = await api.post("/api/v1/github/credentials", {
      name: `pat-${crypto.randomUUID()}`,
      auth_type: "pat",
      pat: { oauth2_token: "ghp_x" },
    });
    expect(await boundApiUrl(created.body.id)).toBe("https://api.github.com");
  });

  it.each(["pat", "app"] as const)("refuses to send %s credentials anywhere else, sending nothing and logging one event", async (kind) => {
    const [home, elsewhere] = [await newWorld(), await newWorld()];
    const endpoint = await createEndpoint(home, true);
    const id = kind === "pat" ? await createPatCredential(endpoint) : await createAppCredential(endpoint);
    await moveEndpointInD1(endpoint, elsewhere.ghesUrl);

    const err = await listRunners(client(id, new TestClock()), org).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(GithubCredentialElsewhereError);
    expect(err).toMatchObject({ credentialId: id, boundApiUrl: home.ghesUrl, url: `${elsewhere.ghesUrl}/orgs/octo/actions/runners` });
    // No installation token was minted, no JWT or token left for either world.
    expect(await seen(home, elsewhere)).toEqual([]);
    expect(refusals()).toEqual([
      expect.objectContaining({
        credential: id,
        endpoint,
        operation: "list_runners",
        bound_api_url: home.ghesUrl,
        url: `${elsewhere.ghesUrl}/orgs/octo/actions/runners`,
      }),
    ]);

    // Pointed back where they were created for, they work again.
    await moveEndpointInD1(endpoint, home.ghesUrl);
    expect(await listRunners(client(id, new TestClock()), org)).toEqual([]);
  });

  it("refuses a path that only starts like the bound one, or a different port or scheme", async () => {
    const world = await newWorld();
    const endpoint = await createEndpoint(world, true);
    const id = await createPatCredential(endpoint);
    const port = new URL(world.url).port;
    for (const moved of [
      `${world.ghesUrl}x`,
      world.url,
      world.ghesUrl.replace(`:${port}`, `:${Number(port) + 1}`),
      world.ghesUrl.replace("http:", "https:"),
    ]) {
      await moveEndpointInD1(endpoint, moved);
      await expect(listRunners(client(id, new TestClock()), org), moved).rejects.toBeInstanceOf(GithubCredentialElsewhereError);
    }
    expect(await seen(world)).toEqual([]);
  });

  it("refuses credentials that record no API URL", async () => {
    const world = await newWorld();
    const id = await createPatCredential(await createEndpoint(world));
    await env.DB.prepare("UPDATE github_credentials SET bound_api_url = NULL WHERE id = ?").bind(id).run();
    const err = await listRunners(client(id, new TestClock()), org).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(GithubCredentialElsewhereError);
    expect((err as Error).message).toMatch(/record no API URL/);
    expect(await seen(world)).toEqual([]);
  });

  it("does not give the Actions service exchange a registration token elsewhere", async () => {
    const [home, elsewhere] = [await newWorld(), await newWorld()];
    const endpoint = await createEndpoint(home);
    const id = await createPatCredential(endpoint);
    await moveEndpointInD1(endpoint, elsewhere.url);
    const clock = new TestClock();
    const svc = new ActionsServiceClient({ gh: client(id, clock), scope: org, clock, adminTokens: new AdminTokens() });
    const r = await svc.runnerGroupId("Default");
    expect(r).toEqual({ ok: false, error: { kind: "permanent", message: expect.stringMatching(/^actions_registration: not sent/) } });
    expect(await seen(home, elsewhere)).toEqual([]);
    expect(refusals()).toHaveLength(1);
  });

  it("answers the webhook routes 409 and installs no hook (with the entity's secret) elsewhere", async () => {
    const [home, elsewhere] = [await newWorld(), await newWorld()];
    const endpoint = await createEndpoint(home);
    const id = await createAppCredential(endpoint);
    const name = (await api.get(`/api/v1/github/credentials/${id}`)).body.name;
    const repo = await api.post("/api/v1/repositories", {
      owner: "octo",
      name: "app",
      credentials_name: name,
      webhook_secret: "hook-secret-1",
    });
    await moveEndpointInD1(endpoint, elsewhere.url);

    const res = await expectRejectedWithoutWrites(409, () => api.post(`/api/v1/repositories/${repo.body.id}/webhook`));
    expect(res.body).toMatchObject({
      code: "conflict",
      error: expect.stringContaining("not sent"),
      details: {
        credentials_id: id,
        bound_api_url: home.url,
        url: `${elsewhere.url}/repos/octo/app/hooks`,
        next: expect.stringContaining("point the endpoint's api_base_url back at bound_api_url"),
      },
    });
    expect((await api.get(`/api/v1/repositories/${repo.body.id}/webhook`)).status).toBe(409);
    expect((await api.delete(`/api/v1/repositories/${repo.body.id}/webhook`)).status).toBe(409);
    expect(await seen(home, elsewhere)).toEqual([]);
    expect((await elsewhere.state()).hooks).toEqual([]);
    expect(errors.join("\n")).not.toContain("hook-secret-1");
  });
});

it("lets the admin API point a moved endpoint back where its credentials are bound, and nowhere else", async () => {
  const [home, elsewhere, third] = [await newWorld(), await newWorld(), await newWorld()];
  const endpoint = await createEndpoint(home, true);
  const id = await createPatCredential(endpoint);
  await createAppCredential(endpoint);
  await moveEndpointInD1(endpoint, elsewhere.ghesUrl);
  const refused = await expectRejectedWithoutWrites(409, () =>
    api.put(`/api/v1/github/endpoints/${endpoint}`, { api_base_url: third.ghesUrl }),
  );
  expect(refused.body).toMatchObject({ code: "in_use", details: { fields: ["api_base_url"] } });
  // Back home with another field changed at once is still a move.
  await expectRejectedWithoutWrites(409, () =>
    api.put(`/api/v1/github/endpoints/${endpoint}`, { api_base_url: `${home.ghesUrl}/`, base_url: "https://elsewhere.example" }),
  );
  const back = await api.put(`/api/v1/github/endpoints/${endpoint}`, { api_base_url: `${home.ghesUrl}/` });
  expect(back.status, back.text).toBe(200);
  expect(back.body.api_base_url).toBe(home.ghesUrl);
  expect(await listRunners(client(id, new TestClock()), org)).toEqual([]);
  expect(await seen(elsewhere, third)).toEqual([]);
});

describe("migration 0019", () => {
  it("binds credentials stored before it to their endpoint's API URL", async () => {
    const world = await newWorld();
    const ghes = await createEndpoint(world, true);
    const ids = [await createPatCredential(ghes), await createAppCredential(await createEndpoint(world))];
    await env.DB.prepare("UPDATE github_credentials SET bound_api_url = NULL").run();
    // A trailing slash as an old row may have kept it.
    await env.DB.prepare("UPDATE github_endpoints SET api_base_url = api_base_url || '/' WHERE name = ?").bind(ghes).run();
    const migration = env.TEST_MIGRATIONS.find((m) => m.name.startsWith("0019_"))!;
    for (const query of migration.queries.filter((q) => /UPDATE/.test(q))) await env.DB.prepare(query).run();
    expect(await Promise.all(ids.map(boundApiUrl))).toEqual([world.ghesUrl, world.url]);
    const unbound = await env.DB.prepare("SELECT COUNT(*) AS n FROM github_credentials WHERE bound_api_url IS NULL").first<{ n: number }>();
    expect(unbound!.n).toBe(0);
  });
});
