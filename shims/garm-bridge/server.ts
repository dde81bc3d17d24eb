import type { Server, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { createAdaptorServer } from "@hono/node-server";
import { createBridgeApp } from "./app.ts";
import { createCallbackSender } from "./callbacks.ts";
import type { BridgeConfig } from "./config.ts";
import { createInstanceOperations } from "./instance-operations.ts";
import { createLogger, type Logger } from "./log.ts";
import { createProviderCaller } from "./provider-calls.ts";

/**
 * The GARM bridge: provider shim protocol v1 over HTTP on one side (app.ts, routes.ts), a
 * GARM external provider executable on the other (provider-calls.ts, instance-operations.ts),
 * run once per call exactly as GARM runs it. This file starts and stops it.
 */

export interface GarmBridge {
  url: string;
  port: number;
  /** Stops listening, waits for provider calls under way, then stops retrying callbacks. */
  stop(): Promise<void>;
}

export interface BridgeOptions {
  config: BridgeConfig;
  log?: Logger;
  /** The bridge's own environment, source of `pass_env` (default: process.env). */
  environ?: NodeJS.ProcessEnv;
}

export async function startGarmBridge(opts: BridgeOptions): Promise<GarmBridge> {
  const cfg = opts.config;
  const log = opts.log ?? createLogger();
  const callbacks = cfg.callback_url
    ? createCallbackSender(
        { url: cfg.callback_url, secret: () => cfg.secret, attempts: cfg.callback_attempts, initialDelayMs: cfg.callback_initial_delay_ms },
        log,
      )
    : null;
  const provider = createProviderCaller(cfg, log, opts.environ ?? process.env);
  const operations = createInstanceOperations(cfg, provider, log, callbacks);
  const app = createBridgeApp(cfg, provider, operations, log);

  // A request without a Host header is taken as addressed to the bridge's own host.
  const server = createAdaptorServer({ fetch: app.fetch, hostname: cfg.host }) as Server;
  /** Requests being answered: stop() lets them finish before closing connections. */
  const answering = new Set<Promise<void>>();
  server.on("request", (_req, res: ServerResponse) => {
    const done = new Promise<void>((resolve) => res.once("close", () => resolve()));
    answering.add(done);
    void done.then(() => answering.delete(done));
  });
  server.keepAliveTimeout = 5_000;

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(cfg.port, cfg.host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const host = cfg.host.includes(":") ? `[${cfg.host}]` : cfg.host;
  log("bridge_started", {
    url: `http://${host}:${port}${cfg.base_path}`,
    provider_executable: cfg.provider_executable,
    interface_version: cfg.interface_version,
    async: cfg.async,
    concurrency: cfg.concurrency,
    max_queue: cfg.max_queue,
    timeout_seconds: cfg.timeout_seconds,
  });

  return {
    url: `http://${host}:${port}${cfg.base_path}`,
    port,
    async stop() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      // Killing a provider mid-create would leave a half-made machine: let calls under way finish.
      while (operations.underWay().length || answering.size) await Promise.allSettled([...operations.underWay(), ...answering]);
      // Undelivered callbacks are not lost: the coordinator polls GET for operations it hears nothing about.
      callbacks?.close();
      await callbacks?.idle();
      server.closeAllConnections();
      await closed;
      log("bridge_stopped", {});
    },
  };
}
