import type { EntityKind } from "../db/directory/schema";
import type { Forge } from "../db/github/schema";
import type { WatchKind } from "../db/recovery/schema";

/**
 * Which webhooks the coordinator depends on, and how each entity's lost deliveries are found:
 * a plain function of what is registered and what the watches learned. An entity whose jobs
 * arrive through webhooks depends on its own repository or organization hook (the one with this
 * coordinator's URL), on its App's webhook when its credentials hold that webhook's secret, or on
 * both. Where neither can be read (an enterprise hook: GitHub has no deliveries API for them; a
 * Gitea hook: Gitea keeps its record of deliveries out of its API; a hook the credentials may not
 * read, or none with our URL), the backstop looks for the entity's queued jobs instead.
 */

export interface WatchedEntity {
  id: string;
  kind: EntityKind;
  owner: string;
  name: string;
  endpointName: string;
  forge: Forge;
  credentialsId: string;
  /** Its credentials' App, when they are an App installation whose webhook secret is held here. */
  appWebhook: { appId: number } | null;
  /** Whether any of its jobs may start a runner here: an enabled webhook scale set of its own, or of a parent it may use. */
  served: boolean;
}

/** What the last look at an entity's own hook found. */
export interface HookWatchStatus {
  status: string;
  detail: string | null;
}

export interface HookWatch {
  key: string;
  kind: Exclude<WatchKind, "backstop">;
  endpointName: string;
  /** Who lists it: the entity's credentials (an App: any of its credentials; the lowest id, for a stable choice). */
  credentialsId: string;
  entityId: string | null;
  appId: number | null;
  /** The entities whose lost deliveries it brings back. */
  entities: string[];
}

export interface BackstopWatch {
  key: string;
  endpointName: string;
  credentialsId: string;
  entityId: string;
  forge: Forge;
  /** Why the backstop looks for this entity's jobs. */
  reason: string;
}

/** How an entity's lost deliveries are found, for the setup check and the dashboard. */
export interface EntityRecovery {
  entityId: string;
  means: { watch: string; kind: WatchKind; reason?: string }[];
}

export const hookWatchKey = (entityId: string) => `hook:${entityId}`;
export const appWatchKey = (endpointName: string, appId: number) => `app:${endpointName}:${appId}`;
export const backstopKey = (entityId: string) => `backstop:${entityId}`;

/** Statuses of a hook watch that mean its deliveries cannot be read: the backstop steps in. */
const UNREADABLE = new Set(["forbidden", "not_found", "no_hook"]);

const WHY_UNREADABLE: Record<string, string> = {
  forbidden: "its credentials may not read the hook's deliveries",
  not_found: "GitHub does not show its hook to its credentials",
  no_hook: "it has no webhook with this coordinator's URL",
};

export function watchList(
  entities: readonly WatchedEntity[],
  hookStatus: ReadonlyMap<string, HookWatchStatus>,
): { hooks: HookWatch[]; backstops: BackstopWatch[]; recovery: EntityRecovery[] } {
  const hooks = new Map<string, HookWatch>();
  const backstops: BackstopWatch[] = [];
  const recovery: EntityRecovery[] = [];
  for (const e of [...entities].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))) {
    if (!e.served || e.forge === "forgejo") continue;
    const means: EntityRecovery["means"] = [];
    let readable = false;
    if (e.forge === "github" && e.appWebhook) {
      const key = appWatchKey(e.endpointName, e.appWebhook.appId);
      const app = hooks.get(key);
      if (app) {
        app.entities.push(e.id);
        if (e.credentialsId < app.credentialsId) app.credentialsId = e.credentialsId;
      } else {
        hooks.set(key, {
          key,
          kind: "app",
          endpointName: e.endpointName,
          credentialsId: e.credentialsId,
          entityId: null,
          appId: e.appWebhook.appId,
          entities: [e.id],
        });
      }
      means.push({ watch: key, kind: "app" });
      readable = true;
    }
    let why: string | null = null;
    if (e.forge === "gitea") why = "Gitea does not show its record of webhook deliveries through its API";
    else if (e.kind === "enterprise") why = "GitHub has no API for an enterprise webhook's deliveries";
    else {
      const key = hookWatchKey(e.id);
      const kind = e.kind === "repository" ? "repository" : "organization";
      hooks.set(key, {
        key,
        kind,
        endpointName: e.endpointName,
        credentialsId: e.credentialsId,
        entityId: e.id,
        appId: null,
        entities: [e.id],
      });
      const status = hookStatus.get(key);
      if (status && UNREADABLE.has(status.status)) {
        means.push({ watch: key, kind, reason: WHY_UNREADABLE[status.status] });
        why = WHY_UNREADABLE[status.status]!;
      } else {
        means.push({ watch: key, kind });
        readable = true;
      }
    }
    if (!readable && why) {
      const key = backstopKey(e.id);
      backstops.push({ key, endpointName: e.endpointName, credentialsId: e.credentialsId, entityId: e.id, forge: e.forge, reason: why });
      means.push({ watch: key, kind: "backstop", reason: why });
    }
    recovery.push({ entityId: e.id, means });
  }
  return { hooks: [...hooks.values()], backstops, recovery };
}
