import { createRoute, z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { entityPaths } from "../api/entity-paths";
import { keyringFor } from "../crypto/keyring";
import { open } from "../crypto/secret-box";
import { secretContext } from "../crypto/secret-contexts";
import { createDb } from "../db/client";
import { type EntityRow, findEntity } from "../db/directory/entity-store";
import type { EntityKind } from "../db/directory/schema";
import { entityForge } from "../db/github/github-endpoint-store";
import type { Forge } from "../db/github/schema";
import type { AppEnv } from "../env";
import { FORGEJO_NO_WEBHOOKS } from "../forges/entity-webhook-secret";
import { findGiteaHook, type GiteaHook, installGiteaHook, uninstallGiteaHook } from "../forges/gitea/gitea-hooks";
import { giteaScopeOf } from "../forges/gitea/gitea-scope";
import { GithubClient } from "../github/github-client";
import { findHook, type GithubHook, type HookScope, installHook, uninstallHook } from "../github/hooks";
import { scopeOf } from "../github/scope";
import { ApiError } from "../http/errors";
import { githubFailure } from "../http/github-failure";
import { errorJson, errorResponses, IdParam, jsonResponse, notFoundResponse, Timestamp } from "../http/openapi";
import { requireFound } from "../http/require-found";
import { createRouter } from "../http/router";
import { giteaWebhookUrlFor, webhookUrlFor } from "../lib/webhook-url";

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

// Gitea's Hook has the fields GitHub's has that we show (id, config.url and content_type, events, active, times), and no last_response.
const hookView = (h: GithubHook | GiteaHook): z.infer<typeof WebhookSchema> => ({
  id: h.id,
  url: h.config?.url ?? "",
  events: h.events ?? [],
  active: h.active,
  content_type: h.config?.content_type ?? null,
  insecure_ssl: String(h.config?.insecure_ssl ?? "0") === "1",
  created_at: h.created_at ? new Date(h.created_at).toISOString() : null,
  updated_at: h.updated_at ? new Date(h.updated_at).toISOString() : null,
  last_response: ("last_response" in h && h.last_response) || null,
});

/** Where GitHub (or Gitea, each to its own route) must deliver this coordinator's webhooks. */
export function webhookUrl(env: AppEnv["Bindings"], forge: Forge = "github"): string {
  if (!/^https?:\/\/[^/]/.test((env.PUBLIC_URL ?? "").trim())) {
    throw new ApiError(409, "PUBLIC_URL is not configured: the forge needs the coordinator's public URL to deliver webhooks");
  }
  return forge === "gitea" ? giteaWebhookUrlFor(env.PUBLIC_URL!) : webhookUrlFor(env.PUBLIC_URL!);
}

const permissionHint = (kind: EntityKind, forge: Forge) => (status: number) =>
  status === 404 || status === 403
    ? forge === "gitea"
      ? kind === "repository"
        ? "the Gitea token must be able to administer the repository's hooks (scope write:repository, and admin rights on the repository)"
        : kind === "organization"
          ? "the Gitea token must be able to administer the organization's hooks (scope write:organization, and owner rights on it)"
          : "the Gitea token must be a site administrator's with scope write:admin (system hooks)"
      : kind === "repository"
        ? "the credentials must be able to administer the repository's hooks (PAT: repo or admin:repo_hook; App: repository Webhooks read & write)"
        : "the credentials must be able to administer the organization's hooks (PAT: admin:org_hook; App: organization Webhooks read & write)"
    : undefined;

async function withGithub<T>(
  c: Context<AppEnv>,
  kind: EntityKind,
  id: string,
  fn: (gh: GithubClient, entity: EntityRow, forge: Forge) => Promise<T>,
) {
  const db = createDb(c.env);
  const entity = requireFound(await findEntity(db, kind, id), kind, id);
  const forge = await entityForge(db, entity.id);
  if (forge === "forgejo") throw new ApiError(400, FORGEJO_NO_WEBHOOKS, { forge });
  const gh = new GithubClient({ env: c.env, credentialId: entity.credentialsId });
  try {
    return await fn(gh, entity, forge);
  } catch (err) {
    if (err instanceof ApiError) throw err;
    throw githubFailure(err, permissionHint(kind, forge));
  }
}

/** Repositories and organizations have REST webhooks; GitHub's enterprises do not (Gitea's instance has system hooks). */
function hookScope(entity: EntityRow): HookScope {
  const scope = scopeOf(entity);
  if (scope.kind === "enterprise") {
    throw new ApiError(400, "GitHub has no webhook API for enterprises: install the hook on each organization or repository instead");
  }
  return scope;
}

/** Our hook at the entity's forge: GitHub's hooks, or Gitea's (a system hook for the instance). */
const hooks = (gh: GithubClient, entity: EntityRow, forge: Forge) => {
  if (forge === "gitea") {
    const scope = giteaScopeOf(entity);
    return {
      find: (url: string) => findGiteaHook(gh, scope, url),
      install: (input: { url: string; secret: string; insecureSsl: boolean }) => installGiteaHook(gh, scope, input),
      uninstall: (url: string) => uninstallGiteaHook(gh, scope, url),
    };
  }
  return {
    find: (url: string) => findHook(gh, hookScope(entity), url),
    install: (input: { url: string; secret: string; insecureSsl: boolean }) => installHook(gh, hookScope(entity), input),
    uninstall: (url: string) => uninstallHook(gh, hookScope(entity), url),
  };
};

// Enterprises too: on a Gitea endpoint an enterprise is the whole instance, whose hook is a system hook.
const kinds = entityPaths;

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
          "or on Gitea (type gitea, URL PUBLIC_URL/webhooks/gitea; an instance's is a system hook), " +
          "or brings an existing hook with that URL up to date. Other hooks are left alone. GitHub enterprises have no webhook API (400); Forgejo sends no workflow_job webhooks, its scale sets poll (400).",
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
        const { hook, created } = await withGithub(c, kind, id, async (gh, entity, forge) => {
          const url = webhookUrl(c.env, forge);
          const secret = await open(await keyringFor(c.env), entity.webhookSecretEnc, secretContext.webhookSecret(entity.id));
          return hooks(gh, entity, forge).install({ url, secret, insecureSsl: body.insecure_ssl });
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
        const { hook, url } = await withGithub(c, kind, id, async (gh, entity, forge) => {
          const url = webhookUrl(c.env, forge);
          return { hook: await hooks(gh, entity, forge).find(url), url };
        });
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
        const { removed, url } = await withGithub(c, kind, id, async (gh, entity, forge) => {
          const url = webhookUrl(c.env, forge);
          return { removed: await hooks(gh, entity, forge).uninstall(url), url };
        });
        if (removed === null) throw new ApiError(404, "webhook not installed", { url });
        return c.body(null, 204);
      },
    );
}

export const entityWebhookRoutes = kinds.reduce((router, spec) => register(router, spec), createRouter());
