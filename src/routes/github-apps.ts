import { createRoute, z } from "@hono/zod-openapi";
import { createDb } from "../db/client";
import {
  deleteApp,
  findApp,
  type GithubAppRow,
  type InstallationRow,
  installationRecord,
  listApps,
  listInstallations,
} from "../db/github/github-app-store";
import { ApiError } from "../http/errors";
import { errorResponses, IdParam, iso, jsonResponse, noContent, notFoundResponse, Timestamp } from "../http/openapi";
import { requireFound } from "../http/require-found";
import { createRouter } from "../http/router";
import { installUrl } from "../setup/app-manifest";
import { syncAllInstallations } from "../setup/record-installation";

/**
 * The GitHub Apps made on the first-run page (/ui/setup, GitHub's App manifest flow), read-only
 * but for two things: reading their installations from GitHub again, and forgetting an App. They
 * are created only in the browser, since GitHub's manifest flow is a browser round trip. Secrets
 * never leave: `has_*` says what is stored.
 */

const tags = ["GitHub Apps"];

const InstallationSchema = z
  .object({
    installation_id: z.int(),
    account: z.string(),
    account_type: z.enum(["User", "Organization", "Enterprise"]),
    repository_selection: z.enum(["all", "selected"]),
    repositories: z.array(z.string()).openapi({ description: "owner/name of the repositories it covers, as far as GitHub listed them" }),
    status: z.enum(["active", "suspended", "deleted"]),
    credentials_id: z.uuid().nullable().openapi({ description: "The App credentials made for this installation" }),
    updated_at: Timestamp,
  })
  .openapi("GithubAppInstallation");

const AppSchema = z
  .object({
    id: z.uuid(),
    endpoint: z.string(),
    app_id: z.int(),
    slug: z.string(),
    name: z.string(),
    owner: z.string(),
    html_url: z.string(),
    install_url: z.string().openapi({ description: "Where the App is installed on an account" }),
    permissions: z.record(z.string(), z.string()),
    events: z.array(z.string()),
    has_private_key: z.literal(true),
    has_webhook_secret: z.literal(true),
    installations: z.array(InstallationSchema),
    created_at: Timestamp,
  })
  .openapi("GithubApp");

function view(app: GithubAppRow, installations: InstallationRow[]): z.infer<typeof AppSchema> {
  return {
    id: app.id,
    endpoint: app.endpointName,
    app_id: app.appId,
    slug: app.slug,
    name: app.name,
    owner: app.ownerLogin,
    html_url: app.htmlUrl,
    install_url: installUrl(app.htmlUrl),
    permissions: JSON.parse(app.permissions) as Record<string, string>,
    events: JSON.parse(app.events) as string[],
    has_private_key: true,
    has_webhook_secret: true,
    installations: installations
      .filter((i) => i.appRowId === app.id)
      .map((i) => {
        const rec = installationRecord(i);
        return {
          installation_id: rec.installationId,
          account: rec.accountLogin,
          account_type: rec.accountType,
          repository_selection: rec.repositorySelection,
          repositories: rec.repositories,
          status: rec.status,
          credentials_id: i.credentialsId,
          updated_at: iso(i.updatedAt)!,
        };
      }),
    created_at: iso(app.createdAt)!,
  };
}

const list = createRoute({
  method: "get",
  path: "/github/apps",
  tags,
  summary: "List the GitHub Apps made on the first-run page, with their installations",
  responses: { 200: jsonResponse(z.array(AppSchema), "Apps"), ...errorResponses },
});
const show = createRoute({
  method: "get",
  path: "/github/apps/{id}",
  tags,
  summary: "Show a GitHub App made on the first-run page",
  request: { params: IdParam },
  responses: { 200: jsonResponse(AppSchema, "App"), ...errorResponses, ...notFoundResponse },
});
const sync = createRoute({
  method: "post",
  path: "/github/apps/{id}/sync",
  tags,
  summary: "Read the App's installations and their repositories from GitHub again (and make credentials for new ones)",
  request: { params: IdParam },
  responses: { 200: jsonResponse(AppSchema, "App, as GitHub now says"), ...errorResponses, ...notFoundResponse },
});
const remove = createRoute({
  method: "delete",
  path: "/github/apps/{id}",
  tags,
  summary:
    "Forget a GitHub App made here (its installations' credentials stay until deleted; the App itself stays on GitHub until you delete it there)",
  request: { params: IdParam },
  responses: { ...noContent, ...errorResponses, ...notFoundResponse },
});

export const githubAppRoutes = createRouter()
  .openapi(list, async (c) => {
    const db = createDb(c.env);
    const [apps, installations] = await Promise.all([listApps(db), listInstallations(db)]);
    return c.json(
      apps.map((a) => view(a, installations)),
      200,
    );
  })
  .openapi(show, async (c) => {
    const { id } = c.req.valid("param");
    const db = createDb(c.env);
    const app = requireFound(await findApp(db, id), "GitHub App", id);
    return c.json(view(app, await listInstallations(db, id)), 200);
  })
  .openapi(sync, async (c) => {
    const { id } = c.req.valid("param");
    const db = createDb(c.env);
    const app = requireFound(await findApp(db, id), "GitHub App", id);
    try {
      await syncAllInstallations(c.env, app);
    } catch (err) {
      throw new ApiError(502, "GitHub did not list the App's installations", { reason: err instanceof Error ? err.message : String(err) });
    }
    return c.json(view(app, await listInstallations(db, id)), 200);
  })
  .openapi(remove, async (c) => {
    const { id } = c.req.valid("param");
    const db = createDb(c.env);
    requireFound(await findApp(db, id), "GitHub App", id);
    await deleteApp(db, id);
    return c.body(null, 204);
  });
