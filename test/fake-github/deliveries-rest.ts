/**
 * GitHub's deliveries API over the fake's record (deliveries.ts), in the shapes of its OpenAPI
 * description (checked by test/contract):
 *
 *   GET  /repos/{o}/{r}/hooks/{hook_id}/deliveries            a repository hook's, newest first
 *   GET  /orgs/{org}/hooks/{hook_id}/deliveries               an organization hook's
 *   GET  /app/hook/deliveries                                 the App's own webhook's (App JWT)
 *        per_page (30, at most 100), cursor (opaque; the Link header's rel="next" carries it),
 *        status=success|failure (status_code 200–399 / 400–599, as the description says)
 *   GET  …/deliveries/{delivery_id}                           one, with its request and response
 *   POST …/deliveries/{delivery_id}/attempts                  redeliver: 202, sent in the background
 *
 * Who may: the hooks' own rule (w.scopeAccess), and an installation token needs its
 * installation's `repository_hooks` (repositories) or `organization_hooks` (organizations)
 * permission, as on GitHub; without it 403 "Resource not accessible by integration".
 * There is no deliveries API for enterprise hooks on GitHub, nor here.
 */
import { installationPermissions } from "./apps/reads.ts";
import {
  appKey,
  deliveryOf,
  deliveryRecords,
  type HookKey,
  hookKey,
  keyOfDelivery,
  listDeliveries,
  REDELIVERABLE_MS,
  redeliver,
} from "./deliveries.ts";
import { error, json } from "./rest-answers.ts";
import type { FakeRequest, FakeResponse, Principal, Route, World } from "./world.ts";

const HOOK = "^/(repos/[^/]+/[^/]+|orgs/[^/]+)/hooks/(\\d+)/deliveries";

/** The hook of the path, or why not. */
function hookOf(w: World, m: RegExpExecArray, who: Principal): { key: HookKey } | { denied: FakeResponse } {
  const scope = decodeURIComponent(m[1]!).toLowerCase();
  const denied = w.scopeAccess(scope, who);
  if (denied) return { denied };
  if (who.kind === "installation") {
    const inst = w.installations.get(who.installationId);
    const permission = scope.startsWith("repos/") ? "repository_hooks" : "organization_hooks";
    const level = inst ? installationPermissions(inst)[permission] : undefined;
    if (level !== "read" && level !== "write") return { denied: error(403, "Resource not accessible by integration") };
  }
  const h = w.hooks.get(Number(m[2]));
  if (!h || h.scope !== scope) return { denied: error(404, "Not Found") };
  return { key: hookKey(h.id) };
}

function appOf(who: Principal): { key: HookKey } | { denied: FakeResponse } {
  return who.kind === "app" ? { key: appKey(who.appId) } : { denied: error(401, "A JSON web token could not be decoded") };
}

const CURSOR = /^v1_(\d+)$/;

/** One page of a hook's deliveries, newest first, and the Link to the next. */
function list(w: World, req: FakeRequest, key: HookKey): FakeResponse {
  const perPage = Math.min(100, Math.max(1, Number(req.query.per_page ?? 30) || 30));
  const status = req.query.status;
  if (status !== undefined && status !== "success" && status !== "failure") {
    return error(422, "Validation Failed", { errors: [{ resource: "HookDelivery", field: "status", code: "invalid" }] });
  }
  let before = Number.POSITIVE_INFINITY;
  if (req.query.cursor) {
    const c = CURSOR.exec(req.query.cursor);
    if (!c) return error(400, "Bad Request: the cursor is not one GitHub handed out");
    before = Number(c[1]);
  }
  const low = status === "failure" ? 400 : 200;
  const all = listDeliveries(w, key).filter(
    (d) => d.id < before && (status === undefined || (d.status_code >= low && d.status_code <= low + 199)),
  );
  const items = all.slice(0, perPage);
  if (all.length <= perPage) return json(200, items);
  const q = new URLSearchParams({ per_page: String(perPage), cursor: `v1_${items.at(-1)!.id}`, ...(status && { status }) });
  return json(200, items, { link: `<${req.baseUrl}${req.path}?${q}>; rel="next"` });
}

function one(w: World, key: HookKey, id: number): FakeResponse {
  const d = deliveryOf(w, key, id);
  if (!d) return error(404, "Not Found");
  const { hook_id: _, app_id: __, ...view } = d;
  return json(200, view);
}

function attempt(w: World, req: FakeRequest, key: HookKey, id: number): FakeResponse {
  const r = redeliver(w, key, id, req.baseUrl.endsWith("/api/v3") ? REDELIVERABLE_MS.ghes : REDELIVERABLE_MS.github);
  if (r.status === 202) return json(202, {});
  if (r.status === 404) return error(404, r.message);
  return error(422, "Validation Failed", { errors: [{ resource: "HookDelivery", code: "custom", message: r.message }] });
}

type Handler = (w: World, req: FakeRequest, m: RegExpExecArray, who: Principal) => FakeResponse;
const through =
  (
    find: (w: World, m: RegExpExecArray, who: Principal) => { key: HookKey } | { denied: FakeResponse },
    then: (w: World, req: FakeRequest, key: HookKey, m: RegExpExecArray) => FakeResponse,
  ): Handler =>
  (w, req, m, who) => {
    const found = find(w, m, who);
    return "denied" in found ? found.denied : then(w, req, found.key, m);
  };

export const DELIVERY_ROUTES: Route[] = [
  {
    method: "GET",
    pattern: new RegExp(`${HOOK}$`),
    operation: "list_hook_deliveries",
    handler: through(hookOf, (w, req, key) => list(w, req, key)),
  },
  {
    method: "GET",
    pattern: new RegExp(`${HOOK}/(\\d+)$`),
    operation: "get_hook_delivery",
    handler: through(hookOf, (w, _req, key, m) => one(w, key, Number(m[3]))),
  },
  {
    method: "POST",
    pattern: new RegExp(`${HOOK}/(\\d+)/attempts$`),
    operation: "redeliver_hook_delivery",
    handler: through(hookOf, (w, req, key, m) => attempt(w, req, key, Number(m[3]))),
  },
  {
    method: "GET",
    pattern: /^\/app\/hook\/deliveries$/,
    operation: "list_app_hook_deliveries",
    appJwt: true,
    handler: through(
      (_w, _m, who) => appOf(who),
      (w, req, key) => list(w, req, key),
    ),
  },
  {
    method: "GET",
    pattern: /^\/app\/hook\/deliveries\/(\d+)$/,
    operation: "get_app_hook_delivery",
    appJwt: true,
    handler: through(
      (_w, _m, who) => appOf(who),
      (w, _req, key, m) => one(w, key, Number(m[1])),
    ),
  },
  {
    method: "POST",
    pattern: /^\/app\/hook\/deliveries\/(\d+)\/attempts$/,
    operation: "redeliver_app_hook_delivery",
    appJwt: true,
    handler: through(
      (_w, _m, who) => appOf(who),
      (w, req, key, m) => attempt(w, req, key, Number(m[1])),
    ),
  },
];

type ControlAnswer = { status: number; body: unknown };

/**
 * The control side: GET /_fake/hook-deliveries[?hook_id=N|app_id=N] (GitHub's record in full,
 * newest first, with the hook each belongs to), POST /_fake/hook-deliveries/{id}/attempts (an
 * operator presses "Redeliver": the new delivery once it has its outcome). Null for other paths.
 */
export async function deliveryControl(w: World, method: string, path: string, query: URLSearchParams): Promise<ControlAnswer | null> {
  if (path === "/_fake/hook-deliveries" && method === "GET") {
    const hook = query.get("hook_id");
    const app = query.get("app_id");
    const key = hook !== null ? hookKey(Number(hook)) : app !== null ? appKey(Number(app)) : null;
    return { status: 200, body: deliveryRecords(w, key) };
  }
  const m = /^\/_fake\/hook-deliveries\/(\d+)\/attempts$/.exec(path);
  if (!m || method !== "POST") return null;
  const key = keyOfDelivery(w, Number(m[1]));
  if (key === null) return { status: 404, body: { message: "fake: no such delivery" } };
  const r = redeliver(w, key, Number(m[1]));
  if (r.status !== 202) return { status: r.status, body: { message: `fake: ${r.message}` } };
  return { status: 201, body: await r.done };
}
