import { logEvent } from "../../src/observability/log.ts";
import { shimWorker } from "../common/shim-worker.ts";
import { readConfig, type ShimConfig, type ShimEnv } from "./config.ts";
import { LABEL_VALUE } from "./extra-specs.ts";
import { createHcloudApi } from "./hcloud-api.ts";
import { capabilities, change, create, get, list, type Operations, removeAll } from "./operations.ts";

/**
 * The Hetzner Cloud provider shim: a Cloudflare Worker speaking provider shim protocol v1
 * (docs/provider-shim-protocol.md) to the coordinator and the Hetzner Cloud API to the
 * project (docs/hetzner-shim.md). Stateless: server labels and unique names are its memory.
 * The request's signature, route and pool headers are checked by the shared frame
 * (shims/common/shim-worker.ts); this file runs the operation against Hetzner.
 */
export default shimWorker<ShimEnv, ShimConfig>({
  name: "Hetzner",
  readConfig,
  capabilities: () => capabilities(),
  // The ids become label values, and label selectors find the pool by them.
  idProblem: (controllerId, poolId) =>
    LABEL_VALUE.test(controllerId) && LABEL_VALUE.test(poolId)
      ? null
      : "controller and pool ids must be Hetzner label values (at most 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit)",
  async run({ route, body, controllerId, poolId, specs, log }, config) {
    let calls = 0;
    const o: Operations = {
      api: createHcloudApi({
        endpoint: config.endpoint,
        token: config.token,
        timeoutMs: config.timeoutMs,
        onCall: (c) => {
          calls++;
          if (c.code)
            logEvent({
              event: "hcloud_call_failed",
              scale_set: poolId,
              instance: "id" in route ? route.id : null,
              action: `${c.method} ${c.path.split("?")[0]}`,
              status: c.status,
              code: c.code,
              duration_ms: c.ms,
              error: c.code,
            });
        },
      }),
      scope: { controllerId, poolId },
      headerSpecs: specs,
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
      log.hcloud_calls = calls;
    }
  },
});
