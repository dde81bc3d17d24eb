import { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "./env";
import { adminAuth } from "./http/admin-auth";
import { auditTrail } from "./http/audit-trail";
import { ApiError, errorResponse, renderError } from "./http/errors";
import { requestId } from "./http/request-id";
import { callsFlushDue, flushCounters, usageFlushDue } from "./observability/op-counters";
import { auditRoutes } from "./routes/audit";
import { doctorRoutes } from "./routes/doctor";
import { entityRoutes } from "./routes/entities";
import { entityWebhookRoutes } from "./routes/entity-webhooks";
import { githubAppRoutes } from "./routes/github-apps";
import { githubCredentialRoutes } from "./routes/github-credentials";
import { githubEndpointRoutes } from "./routes/github-endpoints";
import { instanceRoutes } from "./routes/instances";
import { jobRoutes } from "./routes/jobs";
import { documentMetadata, metadataRoutes } from "./routes/metadata";
import { metricsRoutes } from "./routes/metrics";
import { PROVIDER_CALLBACK_PATH, providerCallbackRoutes } from "./routes/provider-callbacks";
import { providerRoutes } from "./routes/providers";
import { recoveryRoutes } from "./routes/recovery";
import { documentRunnerCallbacks, runnerCallbackRoutes } from "./routes/runner-callbacks";
import { scaleSetRoutes } from "./routes/scalesets";
import { secretRoutes } from "./routes/secrets";
import { tokenRoutes } from "./routes/tokens";
import { usageRoutes } from "./routes/usage";
import { webhookRoutes } from "./routes/webhooks";
import { createUiRoutes } from "./ui/routes";

export const API_PREFIX = "/api/v1";

/** Paths under the API prefix that do not take the admin token (they have their own auth, or none). */
const PUBLIC_API_PATHS = [/^\/api\/v1\/openapi\.json$/, PROVIDER_CALLBACK_PATH, /^\/api\/v1\/(callbacks|metadata)(\/|$)/];

export function createApp() {
  const app = new OpenAPIHono<AppEnv>({ strict: false });

  // First: everything after it, logs and error bodies included, knows the request's id.
  app.use("*", requestId);
  app.onError(renderError);
  app.notFound((c) => errorResponse(c, new ApiError(404, "not found", { path: c.req.path })));

  app.get("/healthz", (c) => c.json({ status: "ok" }));

  // Outbound calls a request made (GitHub checks, hook installs, JIT configs) are counted in memory;
  // write them with a request rather than one D1 round trip per call, at most every 30 s per
  // isolate (see observability/op-counters.ts).
  app.use("*", async (c, next) => {
    await next();
    if (c.res.status < 400 && (callsFlushDue() || usageFlushDue())) await flushCounters(c.env.DB);
  });

  // Prometheus scrapes with METRICS_TOKEN, not the admin token.
  app.route("/", metricsRoutes);

  // The dashboard: its own session cookie and CSRF tokens (outside /api/v1, so not adminAuth's);
  // its actions go through the admin API below, in-process.
  app.route(
    "/ui",
    createUiRoutes((req, env, ctx) => app.fetch(req, env, ctx)),
  );

  // Outside the admin API: GitHub authenticates with the webhook signature, not a token.
  app.route("/", webhookRoutes);

  // The audit trail wraps authentication, so it sees the result of every authenticated write (refusals included).
  app.use(`${API_PREFIX}/*`, auditTrail);
  app.use(`${API_PREFIX}/*`, adminAuth(PUBLIC_API_PATHS));

  const admin = [
    githubEndpointRoutes,
    githubCredentialRoutes,
    githubAppRoutes,
    entityRoutes,
    entityWebhookRoutes,
    providerRoutes,
    scaleSetRoutes,
    instanceRoutes,
    jobRoutes,
    secretRoutes,
    tokenRoutes,
    auditRoutes,
    doctorRoutes,
    recoveryRoutes,
    usageRoutes,
  ];
  for (const routes of admin) app.route(API_PREFIX, routes);
  // Signed by the provider shim, not the admin token (exempted in PUBLIC_API_PATHS).
  app.route(API_PREFIX, providerCallbackRoutes);
  // Runner instances authenticate with their own token (exempted in PUBLIC_API_PATHS).
  app.route(API_PREFIX, runnerCallbackRoutes);
  app.route(API_PREFIX, metadataRoutes);
  documentRunnerCallbacks(app as never, API_PREFIX);
  documentMetadata(app as never, API_PREFIX);

  app.openAPIRegistry.registerComponent("securitySchemes", "adminToken", {
    type: "http",
    scheme: "bearer",
    description: "The ADMIN_TOKEN secret, or a named API token (`edr_…`, POST /api/v1/tokens): a `read` token may only GET",
  });
  app.openAPIRegistry.registerComponent("securitySchemes", "cloudflareAccess", {
    type: "apiKey",
    in: "header",
    name: "Cf-Access-Jwt-Assertion",
    description:
      "The JWT Cloudflare Access adds when ACCESS_TEAM_DOMAIN and ACCESS_AUD are set (docs/operations.md); its scope is ACCESS_SCOPE",
  });
  app.openAPIRegistry.registerComponent("securitySchemes", "providerSignature", {
    type: "apiKey",
    in: "header",
    name: "X-Edgerunner-Signature",
    description:
      "HMAC-SHA256 with the provider's secret over timestamp, method, path and body, with X-Edgerunner-Timestamp " +
      "(docs/provider-shim-protocol.md)",
  });
  app.doc31(`${API_PREFIX}/openapi.json`, (c) => ({
    openapi: "3.1.0",
    info: {
      title: "Edgerunner",
      version: "1",
      description: "Coordinator for self-hosted GitHub Actions runners on Cloudflare Workers",
    },
    servers: [{ url: new URL(c.req.url).origin }],
    security: [{ adminToken: [] } as Record<string, string[]>, { cloudflareAccess: [] }],
  }));

  return app;
}
