/**
 * The fake GitHub's read-only views that the setup check (`edgerunner doctor`) asks for: an App
 * installation as the App sees it (its permissions and events) and the App's own webhook settings
 * (`Seed.app_hooks`; each world's share lives here, keyed by the world). Kept apart from world.ts,
 * which wires these routes into its table. The deliveries of hooks and of Apps' webhooks, seeded
 * or made, are in deliveries.ts. Answers follow GitHub's OpenAPI description (checked by
 * test/contract).
 */

import { appKey, seedDeliveries, setTarget } from "../deliveries.ts";
import type { SeedAppHook } from "../types.ts";
import type { FakeResponse, Principal, Route, World } from "../world.ts";
import { registryOf } from "./registry.ts";
import { DEFAULT_INSTALLATION_PERMISSIONS, installationView } from "./rest.ts";

/** What an installation has when the seed says nothing: everything Edgerunner needs (rest.ts). */
const DEFAULT_INSTALLATION_EVENTS: readonly string[] = ["workflow_job"];

type InstallationLike = { permissions?: Record<string, string>; events?: string[] };
export const installationPermissions = (i: InstallationLike) => ({ ...(i.permissions ?? DEFAULT_INSTALLATION_PERMISSIONS) });
export const installationEvents = (i: InstallationLike) => [...(i.events ?? DEFAULT_INSTALLATION_EVENTS)];

interface AppHook {
  config: { url?: string; content_type: string; insecure_ssl: string };
}

/** By App id. */
const shares = new WeakMap<World, Map<number, AppHook>>();
function appHooks(w: World): Map<number, AppHook> {
  let s = shares.get(w);
  if (!s) {
    s = new Map();
    shares.set(w, s);
  }
  return s;
}

// The same error body as world.ts's `error`, written out: this file must not import world.ts at
// run time (world.ts imports it).
const fail = (status: number, message: string): FakeResponse => ({
  status,
  headers: {},
  body: { message, documentation_url: "https://docs.github.com/rest", status: String(status) },
});
const ok = (body: unknown): FakeResponse => ({ status: 200, headers: {}, body });

/** Sets an App's own webhook (Seed.app_hooks; the App-manifest flow may call it for the hook it creates). */
export function setAppHook(w: World, h: SeedAppHook): void {
  const hooks = appHooks(w);
  const installationId = [...w.installations.values()].find((i) => i.appId === h.app_id)?.id ?? null;
  const prior = hooks.get(h.app_id);
  const url = h.url ?? prior?.config.url;
  hooks.set(h.app_id, {
    config: {
      ...(url !== undefined && { url }),
      content_type: h.content_type ?? prior?.config.content_type ?? "json",
      insecure_ssl: h.insecure_ssl ?? prior?.config.insecure_ssl ?? "0",
    },
  });
  if (url !== undefined) setTarget(w, appKey(h.app_id), url);
  seedDeliveries(w, appKey(h.app_id), url ?? "", h.deliveries ?? [], installationId);
}

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
      const hook = appHooks(w).get(asApp(who) ?? -1);
      // An App made through the manifest pages has the webhook its manifest asked for.
      const made = registryOf(w).apps.get(asApp(who) ?? -1)?.hook;
      if (!hook && made) return ok({ url: made.url, content_type: "json", insecure_ssl: "0" });
      return ok(hook ? hook.config : { content_type: "json", insecure_ssl: "0" });
    },
  },
];
