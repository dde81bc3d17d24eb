/**
 * What a world knows of the GitHub Apps made through its web pages (the manifest flow,
 * manifests.ts) and of the web side around them: the signed-in user the pages act as, the
 * one-hour conversion codes, the numeric ids GitHub gives accounts and repositories, and the
 * App events delivered (installations.ts). Kept beside the World (one registry per world)
 * so world.ts stays about the REST API; the App's key and its installations live in the World
 * itself, where authentication and the runner endpoints find them.
 */
import type { AppEventDelivery, FakeInstallation, FakeManifestApp } from "../types.ts";
import type { World } from "../world.ts";

/** The login the web pages act as until PUT /_fake/web-user says otherwise. */
export const DEFAULT_WEB_USER = "octocat";

/** GitHub: "You must complete all three steps in the GitHub App Manifest flow within one hour." */
export const CODE_TTL_MS = 60 * 60_000;

export class AppRegistry {
  webUser = DEFAULT_WEB_USER;
  readonly apps = new Map<number, FakeManifestApp>();
  /** Conversion codes: single use, valid for an hour. */
  readonly codes = new Map<string, { appId: number; expiresAt: number }>();
  readonly deliveries: AppEventDelivery[] = [];
  private readonly ids = new Map<string, number>();
  private readonly inflight = new Set<Promise<void>>();
  private readonly world: World;

  constructor(world: World) {
    this.world = world;
  }

  /** A stable id for an account (`user:login`, `org:login`) or a repository (`repo:owner/name`). */
  idOf(key: string): number {
    let id = this.ids.get(key);
    if (id === undefined) {
      id = this.world.newId();
      this.ids.set(key, id);
    }
    return id;
  }

  /** The world's accounts: its organizations, and the signed-in user. */
  accountType(login: string): "User" | "Organization" {
    return this.world.orgs.has(login.toLowerCase()) ? "Organization" : "User";
  }

  /** The account whose id is `id`, if the world has it. */
  accountById(id: number): string | null {
    for (const login of [this.webUser.toLowerCase(), ...this.world.orgs]) {
      if (this.idOf(`${this.accountType(login) === "User" ? "user" : "org"}:${login}`) === id) return login;
    }
    return null;
  }

  accountId(login: string): number {
    return this.idOf(`${this.accountType(login) === "User" ? "user" : "org"}:${login.toLowerCase()}`);
  }

  /** The world's repositories owned by `account`, sorted. */
  repositoriesOf(account: string): string[] {
    return [...this.world.repos].filter((r) => r.split("/")[0] === account.toLowerCase()).sort();
  }

  bySlug(slug: string): FakeManifestApp | undefined {
    return [...this.apps.values()].find((a) => a.slug === slug.toLowerCase());
  }

  /** Keeps track of a delivery under way, so settle() can wait for it. */
  track(p: Promise<void>) {
    const tracked = p.finally(() => this.inflight.delete(tracked));
    this.inflight.add(tracked);
  }

  async settle(): Promise<void> {
    while (this.inflight.size) await Promise.all([...this.inflight]);
  }
}

/** Whether the installation lets its App see `repository` (`owner/name`, lower-cased). */
export function covers(installation: FakeInstallation, repository: string): boolean {
  if (installation.account !== repository.split("/")[0]) return false;
  return installation.repositorySelection !== "selected" || (installation.repositories ?? []).includes(repository);
}

const registries = new WeakMap<World, AppRegistry>();

export function registryOf(world: World): AppRegistry {
  let r = registries.get(world);
  if (!r) {
    r = new AppRegistry(world);
    registries.set(world, r);
  }
  return r;
}

/**
 * The App webhooks that hear of `event`: each manifest App whose webhook is active and which
 * subscribes the event, as a hook the workflow player delivers to (signed with the App's secret;
 * app-webhook.ts adds the installation and drops repositories none covers), once per delivery,
 * as GitHub does.
 */
export function manifestAppHooks(world: World, event: string): { url: string; secret: string; app_id: number }[] {
  return [...registryOf(world).apps.values()]
    .filter((a) => a.hook?.active && a.webhook_secret !== null && a.events.includes(event))
    .map((a) => ({ url: a.hook!.url, secret: a.webhook_secret!, app_id: a.id }));
}
