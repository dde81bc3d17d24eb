import { env } from "cloudflare:workers";
import { inject } from "vitest";
import { GithubClient, type GithubClientOptions } from "../../src/github/github-client";
import type { Clock } from "../../src/lib/clock";
import { createWorld, type FakeWorld } from "../fake-github/control-client";
import appKeyPkcs1 from "../fixtures/app-key-pkcs1.pem?raw";
import appKeyPkcs8 from "../fixtures/app-key-pkcs8.pem?raw";
import appKeyPublic from "../fixtures/app-key-public.pem?raw";
import { api } from "./helpers";

export { appKeyPkcs1, appKeyPkcs8, appKeyPublic };

export const APP_ID = 4242;
export const INSTALLATION_ID = 777;

/** A clock the test moves: sleeping advances it instantly, and is recorded. */
export class TestClock implements Clock {
  t: number;
  readonly sleeps: number[] = [];
  constructor(start = Date.now()) {
    this.t = start;
  }
  now = () => this.t;
  sleep = async (ms: number) => {
    this.sleeps.push(ms);
    this.t += ms;
  };
  random = () => 0;
  advance(ms: number) {
    this.t += ms;
  }
}

/** A new fake GitHub world with the usual accounts. */
export async function newWorld(): Promise<FakeWorld> {
  const world = await createWorld(inject("fakeGithubUrl"));
  await world.seed({
    repos: ["octo/app"],
    orgs: ["octo"],
    enterprises: ["acme"],
    pats: [{ token: "ghp_test_token", login: "octocat" }],
    apps: [{ id: APP_ID, public_key: appKeyPublic }],
    installations: [{ id: INSTALLATION_ID, app_id: APP_ID, account: "octo" }],
  });
  return world;
}

let counter = 0;
const unique = (prefix: string) => `${prefix}-${Date.now().toString(36)}-${counter++}`;

/** An endpoint whose API is the world (github.com style, or GHES with /api/v3). */
export async function createEndpoint(world: FakeWorld, ghes = false): Promise<string> {
  const name = unique(ghes ? "ghes" : "dotcom");
  const res = await api.post("/api/v1/github/endpoints", {
    name,
    base_url: "https://github.example.test",
    api_base_url: ghes ? world.ghesUrl : world.url,
  });
  if (res.status !== 201) throw new Error(`endpoint: ${res.status} ${res.text}`);
  return name;
}

export async function createPatCredential(endpoint: string, token = "ghp_test_token"): Promise<string> {
  const res = await api.post("/api/v1/github/credentials", {
    name: unique("pat"),
    endpoint,
    auth_type: "pat",
    pat: { oauth2_token: token },
  });
  if (res.status !== 201) throw new Error(`credentials: ${res.status} ${res.text}`);
  return res.body.id;
}

export async function createAppCredential(endpoint: string, privateKey = appKeyPkcs1, installationId = INSTALLATION_ID): Promise<string> {
  const res = await api.post("/api/v1/github/credentials", {
    name: unique("app"),
    endpoint,
    auth_type: "app",
    app: { app_id: APP_ID, installation_id: installationId, private_key: privateKey },
  });
  if (res.status !== 201) throw new Error(`credentials: ${res.status} ${res.text}`);
  return res.body.id;
}

export function client(credentialId: string, clock: Clock, opts: Partial<GithubClientOptions> = {}) {
  return new GithubClient({ env, credentialId, clock, ...opts });
}
