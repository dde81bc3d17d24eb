/**
 * Where a request lands. The coordinator signs the request target it sends,
 * `{base_path}/v1/…?query`; a proxy in front of the bridge may have stripped the base path on
 * the way. Routing sees the protocol path (base path removed); the signature check sees the
 * target the coordinator signed (base path put back when a proxy stripped it). Both work on
 * the raw target, percent-encoding untouched, as it arrived.
 */

/** The path of a raw request target (`/lxd/v1/instances?x=1` → `/lxd/v1/instances`). */
export const pathOf = (target: string): string => target.split("?")[0]!;

/** The path the bridge routes on: `/v1/…` (or `/healthz`) whether or not the base path came with it. */
export function protocolPath(target: string, basePath: string): string {
  const path = pathOf(target);
  return basePath && path.startsWith(`${basePath}/`) ? path.slice(basePath.length) : path;
}

/** The target the coordinator signed. */
export function signedTarget(target: string, basePath: string): string {
  const path = pathOf(target);
  const stripped = basePath !== "" && !path.startsWith(`${basePath}/`) && path.startsWith("/v1/");
  return stripped ? basePath + target : target;
}
