import type { Principal } from "./principal";

/**
 * The dashboard calls the admin API in-process (src/ui/admin-api.ts) on behalf of its signed-in
 * user. The user's principal travels with the Request object itself, not in a header, so no
 * client can claim one: only code holding the very Request the dispatcher is handed can.
 */
const principals = new WeakMap<Request, Principal>();

export function actingAs(req: Request, principal: Principal): Request {
  principals.set(req, principal);
  return req;
}

export const inProcessPrincipal = (req: Request): Principal | undefined => principals.get(req);
