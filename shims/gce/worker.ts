import { logEvent } from "../../src/observability/log.ts";
import { runPoolOperation, shimWorker } from "../common/shim-worker.ts";
import { readConfig, type ShimConfig, type ShimEnv } from "./config.ts";
import { labelValue } from "./extra-specs.ts";
import { flavors } from "./flavors.ts";
import { createGceApi, type GceApi } from "./gce-api.ts";
import { capabilities, change, create, get, list, type Operations, removeAll } from "./operations.ts";

/**
 * The Google Compute Engine provider shim: a Cloudflare Worker speaking provider shim protocol
 * v1.2 (docs/provider-shim-protocol.md) to the coordinator and Compute Engine's REST API to
 * Google (docs/gce-shim.md), as a service account whose key is a Worker secret. Stateless:
 * instance names and labels are its memory (the flavor catalogue is only kept a while in the
 * isolate). The request's signature, route and pool headers are checked by the shared frame
 * (shims/common/shim-worker.ts); this file runs the operation on GCE.
 */

/** A Compute Engine client for one request: counts its calls for the request's log line, and logs each failed one. */
function gceFor(config: ShimConfig, poolId: string, instance: string | null, log: Record<string, unknown>): GceApi {
  log.gce_calls = 0;
  return createGceApi({
    endpoint: config.endpoint,
    account: config.account,
    timeoutMs: config.callTimeoutMs,
    onCall: (c) => {
      log.gce_calls = Number(log.gce_calls) + 1;
      if (c.reason)
        logEvent({
          event: "gce_call_failed",
          scale_set: poolId,
          instance,
          method: c.method,
          status: c.status,
          code: c.reason,
          duration_ms: c.ms,
          error: c.reason,
        });
    },
  });
}

export default shimWorker<ShimEnv, ShimConfig>({
  name: "GCE",
  readConfig,
  capabilities: (config) => capabilities(config.project),
  idProblem: (controllerId, poolId) =>
    controllerId.length > 256 || poolId.length > 256 ? "controller and pool ids are at most 256 characters" : null,
  async run({ route, body, controllerId, poolId, specs, log }, config) {
    const o: Operations = {
      gce: gceFor(config, poolId, "id" in route ? route.id : null, log),
      scope: {
        project: config.project,
        controllerId,
        poolId,
        controllerLabel: await labelValue(controllerId),
        poolLabel: await labelValue(poolId),
      },
      headerSpecs: specs,
      zones: config.zones,
      createDeadlineMs: config.createDeadlineMs,
    };
    return runPoolOperation(route, body, o, { create, list, removeAll, get, change });
  },
  flavors: ({ poolId, specs, log }, config) =>
    flavors(
      {
        gce: gceFor(config, poolId, null, log),
        project: config.project,
        account: [config.endpoint, config.account.clientEmail].join("\n"),
        headerSpecs: specs,
        zones: config.zones,
      },
      log,
    ),
});
