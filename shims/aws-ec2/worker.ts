import { logEvent } from "../../src/observability/log.ts";
import { shimWorker } from "../common/shim-worker.ts";
import { readConfig, type ShimConfig, type ShimEnv } from "./config.ts";
import { createEc2Api } from "./ec2-api.ts";
import { capabilities, change, create, get, list, type Operations, removeAll } from "./operations.ts";

/**
 * The EC2 provider shim: a Cloudflare Worker speaking provider shim protocol v1
 * (docs/provider-shim-protocol.md) to the coordinator and the EC2 Query API to AWS
 * (docs/aws-ec2-shim.md). Stateless: EC2's tags and client tokens are its memory.
 * The request's signature, route and pool headers are checked by the shared frame
 * (shims/common/shim-worker.ts); this file runs the operation against EC2.
 */
export default shimWorker<ShimEnv, ShimConfig>({
  name: "EC2",
  readConfig,
  capabilities: (config) => capabilities(config.region),
  idProblem: (controllerId, poolId) =>
    controllerId.length > 256 || poolId.length > 256 ? "controller and pool ids are at most 256 characters (EC2 tag values)" : null,
  async run({ route, body, controllerId, poolId, specs, log }, config) {
    let ec2Calls = 0;
    const o: Operations = {
      ec2: createEc2Api({
        endpoint: config.endpoint,
        region: config.region,
        accessKeyId: config.accessKeyId,
        secretAccessKey: config.secretAccessKey,
        sessionToken: config.sessionToken,
        timeoutMs: config.ec2TimeoutMs,
        onCall: (c) => {
          ec2Calls++;
          if (c.code)
            logEvent({
              event: "ec2_call_failed",
              scale_set: poolId,
              instance: "id" in route ? route.id : null,
              action: c.action,
              status: c.status,
              code: c.code,
              duration_ms: c.ms,
              error: c.code,
            });
        },
      }),
      scope: { controllerId, poolId },
      headerSpecs: specs,
      region: config.region,
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
          return await change(o, route.id, "TerminateInstances");
        case "start":
          return await change(o, route.id, "StartInstances");
        case "stop":
          return await change(o, route.id, "StopInstances");
      }
    } finally {
      log.ec2_calls = ec2Calls;
    }
  },
});
