import { Hono, type MiddlewareHandler } from "hono";
import { type BridgeEnv, errorAnswer, HttpError, requestPath } from "./answers.ts";
import type { BridgeConfig } from "./config.ts";
import type { InstanceOperations } from "./instance-operations.ts";
import { type Logger, redact } from "./log.ts";
import type { ProviderCaller } from "./provider-calls.ts";
import { readBody } from "./request-body.ts";
import { protocolPath } from "./request-target.ts";
import { protocolRoutes } from "./routes.ts";
import { requireSignature } from "./signature.ts";

const MAX_REQUEST_BYTES = 1024 * 1024;

/** One `bridge_request` line per answered request; the error text is redacted and cut short. */
function requestLog(log: Logger, secrets: string[]): MiddlewareHandler<BridgeEnv> {
  return async (c, next) => {
    const started = performance.now();
    await next();
    const error = c.get("error");
    log("bridge_request", {
      method: c.req.method,
      operation: c.get("operation") ?? "unknown",
      scale_set: c.req.header("X-Edgerunner-Pool-Id"),
      instance: c.get("instance"),
      status: c.res.status,
      duration_ms: Math.round(performance.now() - started),
      ...(error ? { error: redact(error, secrets).slice(0, 1024) } : {}),
    });
  };
}

/**
 * The bridge's HTTP side, in the order a request meets it: the health check (no signature,
 * not logged), the request log, reading the body (size limit), the signature check, then the protocol
 * routes. Errors anywhere are answered `{error, details?}`.
 */
export function createBridgeApp(cfg: BridgeConfig, provider: ProviderCaller, ops: InstanceOperations, log: Logger): Hono<BridgeEnv> {
  const secrets = [cfg.secret, ...cfg.previous_secrets];
  // Routes are matched on the raw target with the base path taken off (see request-target.ts).
  const app = new Hono<BridgeEnv>({
    getPath: (req, options) => protocolPath(options?.env?.incoming.url ?? new URL(req.url).pathname, cfg.base_path),
  });

  app.get("/healthz", (c, next) => (c.req.method === "GET" ? c.json({ ok: true, ...provider.stats() }) : next()));
  app.use(requestLog(log, secrets));
  app.use(readBody(MAX_REQUEST_BYTES));
  app.use(requireSignature(secrets, cfg.base_path));
  app.route("/", protocolRoutes(cfg, provider, ops));

  app.notFound((c) => errorAnswer(c, 404, `no route ${c.req.method} ${requestPath(c)}`));
  app.onError((err, c) =>
    err instanceof HttpError ? errorAnswer(c, err.status, err.message, err.details) : errorAnswer(c, 500, `bridge error: ${err.message}`),
  );
  return app;
}
