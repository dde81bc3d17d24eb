import { createRoute, z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { entityPaths } from "../api/entity-paths";
import { keyringFor } from "../crypto/keyring";
import { open } from "../crypto/secret-box";
import { secretContext } from "../crypto/secret-contexts";
import { createDb } from "../db/client";
import { type EntityRow, findEntity } from "../db/entity-store";
import type { EntityKind } from "../db/schema";
import type { AppEnv } from "../env";
import { GithubClient } from "../github/github-client";
import { findHook, type GithubHook, type HookScope, installHook, uninstallHook } from "../github/hooks";
import { scopeOf } from "../github/scope";
import { ApiError } from "../http/errors";
import { githubFailure } from "../http/github-failure";
import { errorJson, errorResponses, IdParam, jsonResponse, notFoundResponse, Timestamp } from "../http/openapi";
import { requireFound } from "../http/require-found";
import { createRouter } from "../http/router";
import { webhookUrlFor } from "../lib/webhook-url";

const WebhookSchema = z
  .object({
    id: z.int().openapi({ description: "GitHub's hook id" }),
    url: z.string(),
    events: z.array(z.string()),
    active: z.boolean(),
    content_type: z.string().nullable(),
    insecure_ssl: z.boolean(),
    created_at: Timestamp.nullable(),
    updated_at: Timestamp.nullable(),
    last_response: z
      .object({ code: z.int().nullable(), status: z.string().nullable(), message: z.string().nullable() })
      .nullable()
      .openapi({ description: "GitHub's record of the last delivery (repository hooks only)" }),
  })
  .openapi("Webhook");

const InstallWebhook = z
  .strictObject({
    insecure_ssl: z.boolean().default(false).openapi({ description: "Let GitHub skip TLS verification (self-signed coordinator URL)" }),
  })
  .openapi("InstallWebhook");

const githubErrors = {
  409: errorJson(
    "GitHub refuses the entity's credentials, or they were not sent: their endpoint no longer points at the API URL they were created for",
  ),
  502: errorJson("GitHub refused or failed the request"),
  503: errorJson("Credentials are rate limited (see Retry-After)"),
} as const;

const hookView = (h: GithubHook): z.infer<typeof WebhookSchema> => ({
  id: h.id,
  url: h.config?.url ?? "",
  events: h.events ?? [],
  active: h.active,
  content_type: h.config?.content_type ?? null,
  insecure_ssl: String(h.config?.insecure_ssl ?? "0") === "1",
  created_at: h.created_at ? new Date(h.created_at).toISOString() : null,
  updated_at: h.updated_at ? new Date(h.updated_at).toISOString() : null,
  last_response: h.last_response ?? null,
});

/** Where GitHub must deliver this coordinator's webhooks. */
export function webhookUrl(env: AppEnv["Bindings"]): string {
  if (!/^https?:\/\/[^/]/.test((env.PUBLIC_URL ?? "").trim())) {
    throw new ApiError(409, "PUBLIC_URL is not configured: GitHub needs the coordinator's public URL to deliver webhooks");
  }
  return webhookUrlFor(env.PUBLIC_URL);
}

const permissionHint = (kind: EntityKind) => (status: number) =>
  status === 404 || status === 403
    ? kind === "repository"
      ? "the credentials must be able to administer the repository's hooks (PAT: repo or admin:repo_hook; App: repository Webhooks read & write)"
      : "the credentials must be able to administer the organization's hooks (PAT: admin:org_hook; App: organization Webhooks read & write)"
    : undefined;

async function withGithub<T>(c: Context<AppEnv>, kind: EntityKind, id: string, fn: (gh: GithubClient, entity: EntityRow) => Promise<T>) {
  const db = createDb(c.env);
  const entity = requireFound(await findEntity(db, kind, id), kind, id);
  const gh = new GithubClient({ env: c.env, credentialId: entity.credentialsId });
  try {
    return await fn(gh, entity);
  } catch (err) {
    if (err instanceof ApiError) throw err;
    throw githubFailure(err, permissionHint(kind));
  }
}

/** Repositories and organizations have REST webhooks; enterprises do not (no route for them). */
function hookScope(entity: EntityRow): HookScope {
  const scope = scopeOf(entity);
  if (scope.kind === "enterprise") throw new ApiError(400, "enterprises have no webhook API");
  return scope;
}

const kinds = entityPaths.filter((p) => p.kind !== "enterprise");

/** Every hook route can fail the same ways: bad input, no such entity, or GitHub refusing. */
const hookErrors = { ...errorResponses, ...notFoundResponse, ...githubErrors };

function register(router: ReturnType<typeof createRouter>, spec: (typeof kinds)[number]) {
  const { kind } = spec;
  const tags = [spec.title];
  const path = `/${spec.path}/{id}/webhook`;

  return router
    .openapi(
      createRoute({
        method: "post",
        path,
        tags,
        summary: `Install this coordinator's workflow_job webhook on the ${kind}`,
        description:
          "Creates the hook on GitHub (events workflow_job, JSON, the entity's webhook secret, URL PUBLIC_URL/webhooks/github), " +
          "or brings an existing hook with that URL up to date. Other hooks are left alone.",
        request: {
          params: IdParam,
          body: { required: false, content: { "application/json": { schema: InstallWebhook } } },
        },
        responses: {
          200: jsonResponse(WebhookSchema, "Our hook existed and was updated"),
          201: jsonResponse(WebhookSchema, "Created"),
          ...hookErrors,
        },
      }),
      async (c) => {
        const { id } = c.req.valid("param");
        const body = InstallWebhook.parse((c.req.valid("json") as unknown) ?? {});
        const url = webhookUrl(c.env);
        const { hook, created } = await withGithub(c, kind, id, async (gh, entity) => {
          const secret = await open(await keyringFor(c.env), entity.webhookSecretEnc, secretContext.webhookSecret(entity.id));
          return installHook(gh, hookScope(entity), { url, secret, insecureSsl: body.insecure_ssl });
        });
        return c.json(hookView(hook), created ? 201 : 200);
      },
    )
    .openapi(
      createRoute({
        method: "get",
        path,
        tags,
        summary: `Show this coordinator's webhook on the ${kind}`,
        request: { params: IdParam },
        responses: {
          200: jsonResponse(WebhookSchema, "Installed"),
          ...hookErrors,
        },
      }),
      async (c) => {
        const { id } = c.req.valid("param");
        const url = webhookUrl(c.env);
        const hook = await withGithub(c, kind, id, (gh, entity) => findHook(gh, hookScope(entity), url));
        if (!hook) throw new ApiError(404, "webhook not installed", { url });
        return c.json(hookView(hook), 200);
      },
    )
    .openapi(
      createRoute({
        method: "delete",
        path,
        tags,
        summary: `Remove this coordinator's webhook from the ${kind}`,
        description: "Only the hook whose URL is this coordinator's is removed.",
        request: { params: IdParam },
        responses: {
          204: { description: "Removed" },
          ...hookErrors,
        },
      }),
      async (c) => {
        const { id } = c.req.valid("param");
        const url = webhookUrl(c.env);
        const removed = await withGithub(c, kind, id, (gh, entity) => uninstallHook(gh, hookScope(entity), url));
        if (removed === null) throw new ApiError(404, "webhook not installed", { url });
        return c.body(null, 204);
      },
    );
}

export const entityWebhookRoutes = kinds.reduce((router, spec) => register(router, spec), createRouter());
