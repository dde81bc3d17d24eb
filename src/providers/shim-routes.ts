/**
 * The routes of provider shim protocol v1 (docs/provider-shim-protocol.md, Routes), for shims
 * to dispatch on: the request's method and its path after the shim's base path.
 */

export type ShimOperation =
  | "capabilities"
  | "flavors"
  | "create"
  | "create_batch"
  | "list"
  | "remove_all"
  | "get"
  | "delete"
  | "start"
  | "stop";

export type ShimRoute =
  | { op: "capabilities" | "flavors" | "create" | "create_batch" | "list" | "remove_all" }
  | { op: "get" | "delete" | "start" | "stop"; id: string };

/**
 * The route for a request, with `{id}` percent-decoded once; `null` for no such path,
 * `method_not_allowed` for a known path with another method, `bad_id` for an id that is not
 * valid percent-encoding.
 */
export function matchShimRoute(method: string, path: string): ShimRoute | "method_not_allowed" | "bad_id" | null {
  const allow = (ok: boolean, route: ShimRoute) => (ok ? route : "method_not_allowed");
  if (path === "/v1/capabilities") return allow(method === "GET", { op: "capabilities" });
  // v1.2: the pool's flavor catalogue (the pool headers say which zones or region it is for).
  if (path === "/v1/flavors") return allow(method === "GET", { op: "flavors" });
  if (path === "/v1/instances") {
    if (method === "POST") return { op: "create" };
    if (method === "GET") return { op: "list" };
    if (method === "DELETE") return { op: "remove_all" };
    return "method_not_allowed";
  }
  // v1.1. `:` cannot be in an {id} (ids are percent-encoded), so this path is no instance's.
  if (path === "/v1/instances:batch") return allow(method === "POST", { op: "create_batch" });
  const m = /^\/v1\/instances\/([^/]+)(?:\/(start|stop))?$/.exec(path);
  if (!m) return null;
  let id: string;
  try {
    id = decodeURIComponent(m[1]!);
  } catch {
    return "bad_id";
  }
  if (m[2]) return allow(method === "POST", { op: m[2] as "start" | "stop", id });
  if (method === "GET") return { op: "get", id };
  if (method === "DELETE") return { op: "delete", id };
  return "method_not_allowed";
}
