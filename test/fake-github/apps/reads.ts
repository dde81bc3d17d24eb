/**
 * The fake GitHub's read-only views that the setup check (`edgerunner doctor`) asks for: an App
 * installation as the App sees it (its permissions and events), the App's own webhook settings
 * and recent deliveries, and a repository's or organization's hook's recent deliveries. Kept
 * apart from world.ts (which wires these routes into its table): deliveries are seeded
 * (`Seed.hooks[].deliveries`, `Seed.app_hooks`), not made by playing workflows, and each world's
 * share lives here, keyed by the world. Answers follow GitHub's OpenAPI description (checked by
 * test/contract).
 */

import type { SeedAppHook, SeedHookDelivery } from "../types.ts";
import type { FakeRequest, FakeResponse, Principal, Route, World } from "../world.ts";
import { registryOf } from "./registry.ts";
import { DEFAULT_INSTALLATION_PERMISSIONS, installationView } from "./rest.ts";

/** What an installation has when the seed says nothing: everything Edgerunner needs (rest.ts). */
const DEFAULT_INSTALLATION_EVENTS: readonly string[] = ["workflow_job"];

type InstallationLike = { permissions?: Record<string, string>; events?: string[] };
export const installationPermissions = (i: InstallationLike) => ({ ...(i.permissions ?? DEFAULT_INSTALLATION_PERMISSIONS) });
export const installationEvents = (i: InstallationLike) => [...(i.events ?? DEFAULT_INSTALLATION_EVENTS)];

interface Delivery {
  id: number;
  guid: string;
  delivered_at: string;
  redelivery: boolean;
  duration: number;
  status: string;
  status_code: number;
  event: string;
  action: string | null;
  installation_id: number | null;
  repository_id: number | null;
  throttled_at: string | null;
}

interface AppHook {
  config: { url?: string; content_type: string; insecure_ssl: string };
  deliveries: Delivery[];
}

interface Share {
  /** By hook id, newest first. */
  hookDeliveries: Map<number, Delivery[]>;
  /** By App id. */
  appHooks: Map<number, AppHook>;
}

const shares = new WeakMap<World, Share>();
function share(w: World): Share {
  let s = shares.get(w);
  if (!s) {
    s = { hookDeliveries: new Map(), appHooks: new Map() };
    shares.set(w, s);
  }
  return s;
}

const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z");

// The same error body as world.ts's `error`, written out: this file must not import world.ts at
// run time (world.ts imports it).
const fail = (status: number, message: string): FakeResponse => ({
  status,
  headers: {},
  body: { message, documentation_url: "https://docs.github.com/rest", status: String(status) },
});
const ok = (body: unknown): FakeResponse => ({ status: 200, headers: {}, body });

function delivery(w: World, d: SeedHookDelivery, installationId: number | null): Delivery {
  const good = d.status_code >= 200 && d.status_code < 400;
  return {
    id: w.newId(),
    guid: crypto.randomUUID(),
    delivered_at: d.delivered_at ? iso(Date.parse(d.delivered_at)) : iso(w.now()),
    redelivery: false,
    duration: 0.12,
    status: d.status ?? (good ? "OK" : d.status_code === 0 ? "timed out" : `Invalid HTTP Response: ${d.status_code}`),
    status_code: d.status_code,
    event: d.event ?? "workflow_job",
    action: d.action === undefined ? "queued" : d.action,
    installation_id: installationId,
    repository_id: null,
    throttled_at: null,
  };
}

const newestFirst = (ds: Delivery[]) => [...ds].sort((a, b) => Date.parse(b.delivered_at) - Date.parse(a.delivered_at));

/** A seeded hook's deliveries (world.ts calls this for `Seed.hooks[].deliveries`). */
export function seedHookDeliveries(w: World, hookId: number, deliveries: SeedHookDelivery[]): void {
  const s = share(w);
  s.hookDeliveries.set(hookId, newestFirst([...(s.hookDeliveries.get(hookId) ?? []), ...deliveries.map((d) => delivery(w, d, null))]));
}

/** Sets an App's own webhook (Seed.app_hooks; the App-manifest flow may call it for the hook it creates). */
export function setAppHook(w: World, h: SeedAppHook): void {
  const s = share(w);
  const installationId = [...w.installations.values()].find((i) => i.appId === h.app_id)?.id ?? null;
  const prior = s.appHooks.get(h.app_id);
  s.appHooks.set(h.app_id, {
    config: {
      ...(h.url !== undefined ? { url: h.url } : prior?.config.url !== undefined ? { url: prior.config.url } : {}),
      content_type: h.content_type ?? prior?.config.content_type ?? "json",
      insecure_ssl: h.insecure_ssl ?? prior?.config.insecure_ssl ?? "0",
    },
    deliveries: newestFirst([...(prior?.deliveries ?? []), ...(h.deliveries ?? []).map((d) => delivery(w, d, installationId))]),
  });
}

const perPage = (req: FakeRequest) => Math.min(100, Math.max(1, Number(req.query.per_page ?? 30) || 30));

const asApp = (who: Principal): number | null => (who.kind === "app" ? who.appId : null);

export const APP_READ_ROUTES: Route[] = [
  {
    method: "GET",
    pattern: /^\/app\/installations\/(\d+)$/,
    operation: "get_installation",
    appJwt: true,
    handler: (w, req, m, who) => {
      const inst = w.installations.get(Number(m[1]));
      if (!inst || inst.appId !== asApp(who)) return fail(404, "Not Found");
      // The same view as GET /app/installations (rest.ts), for this one installation.
      return ok(installationView(w, inst, req.baseUrl, req.baseUrl.replace(/\/api\/v3$/, "")));
    },
  },
  {
    method: "GET",
    pattern: /^\/app\/hook\/config$/,
    operation: "get_app_hook_config",
    appJwt: true,
    handler: (w, _req, _m, who) => {
      const hook = share(w).appHooks.get(asApp(who) ?? -1);
      // An App made through the manifest pages has the webhook its manifest asked for.
      const made = registryOf(w).apps.get(asApp(who) ?? -1)?.hook;
      if (!hook && made) return ok({ url: made.url, content_type: "json", insecure_ssl: "0" });
      return ok(hook ? hook.config : { content_type: "json", insecure_ssl: "0" });
    },
  },
  {
    method: "GET",
    pattern: /^\/app\/hook\/deliveries$/,
    operation: "list_app_hook_deliveries",
    appJwt: true,
    handler: (w, req, _m, who) => ok((share(w).appHooks.get(asApp(who) ?? -1)?.deliveries ?? []).slice(0, perPage(req))),
  },
  {
    method: "GET",
    pattern: /^\/(repos\/[^/]+\/[^/]+|orgs\/[^/]+)\/hooks\/(\d+)\/deliveries$/,
    operation: "list_hook_deliveries",
    handler: (w, req, m, who) => {
      const scope = decodeURIComponent(m[1]!).toLowerCase();
      const denied = w.scopeAccess(scope, who);
      if (denied) return denied;
      const h = w.hooks.get(Number(m[2]));
      if (!h || h.scope !== scope) return fail(404, "Not Found");
      return ok((share(w).hookDeliveries.get(h.id) ?? []).slice(0, perPage(req)));
    },
  },
];
