import { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "./env";
import { adminAuth } from "./http/admin-auth";
import { renderError } from "./http/errors";
import { entityRoutes } from "./routes/entities";
import { githubCredentialRoutes } from "./routes/github-credentials";
import { githubEndpointRoutes } from "./routes/github-endpoints";
import { instanceRoutes } from "./routes/instances";
import { jobRoutes } from "./routes/jobs";
import { providerRoutes } from "./routes/providers";
import { scaleSetRoutes } from "./routes/scalesets";
import { webhookRoutes } from "./routes/webhooks";

export const API_PREFIX = "/api/v1";

/** Paths under the API prefix that do not take the admin token (they have their own auth, or none). */
const PUBLIC_API_PATHS = [/^\/api\/v1\/openapi\.json$/];

export function createApp() {
  const app = new OpenAPIHono<AppEnv>({ strict: false });

  app.onError(renderError);
  app.notFound((c) => c.json({ error: "not found", details: { path: c.req.path } }, 404));

  app.get("/healthz", (c) => c.json({ status: "ok" }));

  // Outside the admin API: GitHub authenticates with the webhook signature, not a token.
  app.route("/", webhookRoutes);

  app.use(`${API_PREFIX}/*`, adminAuth(PUBLIC_API_PATHS));

  const admin = [
    githubEndpointRoutes,
    githubCredentialRoutes,
    entityRoutes,
    providerRoutes,
    scaleSetRoutes,
    instanceRoutes,
    jobRoutes,
  ];
  for (const routes of admin) app.route(API_PREFIX, routes);

  app.openAPIRegistry.registerComponent("securitySchemes", "adminToken", {
    type: "http",
    scheme: "bearer",
    description: "The ADMIN_TOKEN secret",
  });
  app.doc31(`${API_PREFIX}/openapi.json`, (c) => ({
    openapi: "3.1.0",
    info: {
      title: "Edgerunner",
      version: "1",
      description: "Coordinator for self-hosted GitHub Actions runners on Cloudflare Workers",
    },
    servers: [{ url: new URL(c.req.url).origin }],
    security: [{ adminToken: [] }],
  }));

  return app;
}
