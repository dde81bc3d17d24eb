import { logEvent } from "../../src/observability/log.ts";
import { runPoolOperation, shimWorker } from "../common/shim-worker.ts";
import { readConfig, type ShimConfig, type ShimEnv } from "./config.ts";
import { createEc2Api, type Ec2Api } from "./ec2-api.ts";
import { flavors } from "./flavors.ts";
import { capabilities, change, create, get, list, type Operations, removeAll } from "./operations.ts";

/**
 * The EC2 provider shim: a Cloudflare Worker speaking provider shim protocol v1.2
 * (docs/provider-shim-protocol.md) to the coordinator and the EC2 Query API to AWS
 * (docs/aws-ec2-shim.md). Stateless: EC2's tags and client tokens are its memory (the flavor
 * catalogue is only kept a while in the isolate). The request's signature, route and pool
 * headers are checked by the shared frame (shims/common/shim-worker.ts); this file runs the
 * operation against EC2.
 */

/** An EC2 client for one request: counts its calls for the request's log line, and logs each failed one. */
function ec2For(config: ShimConfig, poolId: string, instance: string | null, log: Record<string, unknown>): Ec2Api {
  log.ec2_calls = 0;
  return createEc2Api({
    endpoint: config.endpoint,
    region: config.region,
    accessKeyId: config.accessKeyId,
    secretAccessKey: config.secretAccessKey,
    sessionToken: config.sessionToken,
    timeoutMs: config.ec2TimeoutMs,
    onCall: (c) => {
      log.ec2_calls = Number(log.ec2_calls) + 1;
      if (c.code)
        logEvent({
          event: "ec2_call_failed",
          scale_set: poolId,
          instance,
          action: c.action,
          status: c.status,
          code: c.code,
          duration_ms: c.ms,
          error: c.code,
        });
    },
  });
}

export default shimWorker<ShimEnv, ShimConfig>({
  name: "EC2",
  readConfig,
  capabilities: (config) => capabilities(config.region),
  idProblem: (controllerId, poolId) =>
    controllerId.length > 256 || poolId.length > 256 ? "controller and pool ids are at most 256 characters (EC2 tag values)" : null,
  async run({ route, body, controllerId, poolId, specs, log }, config) {
    const o: Operations = {
      ec2: ec2For(config, poolId, "id" in route ? route.id : null, log),
      scope: { controllerId, poolId },
      headerSpecs: specs,
      region: config.region,
      createDeadlineMs: config.createDeadlineMs,
    };
    return runPoolOperation(route, body, o, { create, list, removeAll, get, change });
  },
  flavors: ({ poolId, specs, log }, config) =>
    flavors(
      {
        ec2: ec2For(config, poolId, null, log),
        account: [config.endpoint, config.region, config.accessKeyId].join("\n"),
        headerSpecs: specs,
      },
      log,
    ),
});
