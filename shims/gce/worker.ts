import { logEvent } from "../../src/observability/log.ts";
import { shimWorker } from "../common/shim-worker.ts";
import { readConfig, type ShimConfig, type ShimEnv } from "./config.ts";
import { labelValue } from "./extra-specs.ts";
import { createGceApi } from "./gce-api.ts";
import { capabilities, change, create, get, list, type Operations, removeAll } from "./operations.ts";

/**
 * The Google Compute Engine provider shim: a Cloudflare Worker speaking provider shim protocol
 * v1 (docs/provider-shim-protocol.md) to the coordinator and Compute Engine's REST API to
 * Google (docs/gce-shim.md), as a service account whose key is a Worker secret. Stateless:
 * instance names and labels are its memory. The request's signature, route and pool headers are
 * checked by the shared frame (shims/common/shim-worker.ts); this file runs the operation on GCE.
 */
export default shimWorker<ShimEnv, ShimConfig>({
  name: "GCE",
  readConfig,
  capabilities: (config) => capabilities(config.project),
  idProblem: (controllerId, poolId) =>
    controllerId.length > 256 || poolId.length > 256 ? "controller and pool ids are at most 256 characters" : null,
  async run({ route, body, controllerId, poolId, specs, log }, config) {
    let calls = 0;
    const o: Operations = {
      gce: createGceApi({
        endpoint: config.endpoint,
        account: config.account,
        timeoutMs: config.callTimeoutMs,
        onCall: (c) => {
          calls++;
          if (c.reason)
            logEvent({
              event: "gce_call_failed",
              scale_set: poolId,
              instance: "id" in route ? route.id : null,
              method: c.method,
              status: c.status,
              code: c.reason,
              duration_ms: c.ms,
              error: c.reason,
            });
        },
      }),
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
    try {
      switch (route.op) {
        case "create":
          return await create(o, body);
        case "list":
          return await list(o);
        case "remove_all":
          return await removeAll(o);
        case "get":
          return await get(o, route.id);
        case "delete":
        case "start":
        case "stop":
          return await change(o, route.id, route.op);
      }
    } finally {
      log.gce_calls = calls;
    }
  },
});
