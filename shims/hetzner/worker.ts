import { logEvent } from "../../src/observability/log.ts";
import { type FlavorsRequest, type PoolRequest, runPoolOperation, shimWorker } from "../common/shim-worker.ts";
import { readConfig, type ShimConfig, type ShimEnv } from "./config.ts";
import { LABEL_VALUE } from "./extra-specs.ts";
import { createHcloudApi } from "./hcloud-api.ts";
import { capabilities, change, create, flavors, get, list, type Operations, removeAll } from "./operations.ts";
import { listServerTypes, serverTypeCache } from "./server-types.ts";

/**
 * The Hetzner Cloud provider shim: a Cloudflare Worker speaking provider shim protocol v1.2
 * (docs/provider-shim-protocol.md; a flavor catalogue, no batch create) to the coordinator and
 * the Hetzner Cloud API to the project (docs/hetzner-shim.md). Stateless but for the server
 * types it remembers for ten minutes: server labels and unique names are its memory.
 * The request's signature, route and pool headers are checked by the shared frame
 * (shims/common/shim-worker.ts); this file runs the operation against Hetzner.
 */

/** The operations' view of one request: a Hetzner API that logs its failures and counts its calls. */
function operations(r: FlavorsRequest, instance: string | null, config: ShimConfig): Operations {
  const api = createHcloudApi({
    endpoint: config.endpoint,
    token: config.token,
    timeoutMs: config.timeoutMs,
    onCall: (c) => {
      r.log.hcloud_calls = Number(r.log.hcloud_calls ?? 0) + 1;
      if (c.code)
        logEvent({
          event: "hcloud_call_failed",
          scale_set: r.poolId,
          instance,
          action: `${c.method} ${c.path.split("?")[0]}`,
          status: c.status,
          code: c.code,
          duration_ms: c.ms,
          error: c.code,
        });
    },
  });
  return {
    api,
    scope: { controllerId: r.controllerId, poolId: r.poolId },
    headerSpecs: r.specs,
    createDeadlineMs: config.createDeadlineMs,
    // Keyed by the project's token too: availability and prices are the project's.
    serverTypes: () => serverTypeCache.get(`${config.endpoint}\n${config.token}`, () => listServerTypes(api)),
    flavorsLocation: config.flavorsLocation,
  };
}

export default shimWorker<ShimEnv, ShimConfig>({
  name: "Hetzner",
  readConfig,
  capabilities: () => capabilities(),
  // The ids become label values, and label selectors find the pool by them.
  idProblem: (controllerId, poolId) =>
    LABEL_VALUE.test(controllerId) && LABEL_VALUE.test(poolId)
      ? null
      : "controller and pool ids must be Hetzner label values (at most 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit)",
  async run(request: PoolRequest, config) {
    const { route, body, log } = request;
    log.hcloud_calls = 0;
    const o = operations(request, "id" in route ? route.id : null, config);
    return runPoolOperation(route, body, o, { create, list, removeAll, get, change });
  },
  async flavors(request, config) {
    request.log.hcloud_calls = 0;
    return flavors(operations(request, null, config), request.log);
  },
});
