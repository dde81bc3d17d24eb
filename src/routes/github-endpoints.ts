import { z } from "@hono/zod-openapi";
import { createDb } from "../db/client";
import {
  deleteEndpoint,
  type EndpointRow,
  endpointExists,
  type endpointPlaceFields,
  endpointUse,
  findEndpoint,
  insertEndpoint,
  listEndpoints,
  updateEndpoint,
} from "../db/github/github-endpoint-store";
import { type Forge, forges } from "../db/github/schema";
import { DEFAULT_ENDPOINT } from "../github/default-endpoint";
import { ApiError, conflict, inUse, invalidBody } from "../http/errors";
import { Description, HttpsUrl, iso, NameParam, now, ResourceName, secureUrlRule, Timestamp } from "../http/openapi";
import { requireFound } from "../http/require-found";
import { resourceRoutes } from "../http/resource-routes";
import { createRouter } from "../http/router";
import { sentFields } from "../http/sent-fields";

const PemBundle = z
  .string()
  .max(256 * 1024)
  .refine((v) => v.includes("-----BEGIN CERTIFICATE-----"), "must be PEM certificates");

const EndpointSchema = z
  .object({
    name: z.string(),
    description: z.string(),
    forge: z.enum(forges).openapi({ description: "Which forge this is: github (github.com or GHES), gitea, forgejo" }),
    base_url: z.string(),
    api_base_url: z.string(),
    upload_base_url: z.string(),
    ca_cert_bundle: z.string().nullable(),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .openapi("GithubEndpoint");

const fixedWhileUsed =
  "Fixed while credentials or entities use the endpoint (stored credentials go only to the API URL they were created for): changing it then is a 409";
const about = {
  base_url: `GitHub's web URL; ${secureUrlRule}`,
  api_base_url: `The REST API URL credentials are sent to; ${secureUrlRule}`,
  upload_base_url: `The uploads API URL; ${secureUrlRule}`,
  ca_cert_bundle: "PEM certificates the runners trust for this endpoint",
};

const CreateEndpoint = z
  .strictObject({
    name: ResourceName,
    description: Description.default(""),
    forge: z.enum(forges).default("github").openapi({
      description:
        "Which forge the endpoint is, fixed once created: github (default), gitea (1.24 or later) or forgejo. Gitea and Forgejo endpoints take tokens only (auth_type pat); see docs/forges.md",
    }),
    base_url: HttpsUrl.openapi({ example: "https://ghes.example.com", description: about.base_url }),
    api_base_url: HttpsUrl.optional().openapi({
      example: "https://ghes.example.com/api/v3",
      description: `${about.api_base_url}. Required for github; for gitea and forgejo it defaults to <base_url>/api/v1`,
    }),
    upload_base_url: HttpsUrl.optional().openapi({ description: about.upload_base_url }),
    ca_cert_bundle: PemBundle.optional().openapi({ description: about.ca_cert_bundle }),
  })
  .refine((v) => v.forge !== "github" || v.api_base_url !== undefined, {
    path: ["api_base_url"],
    message: "required for a github endpoint (a GitHub Enterprise Server's is https://<host>/api/v3)",
  })
  .openapi("CreateGithubEndpoint");

/** Gitea and Forgejo serve their REST API under /api/v1 of the web URL. */
export const defaultApiBaseUrl = (forge: Forge, baseUrl: string): string | null =>
  forge === "github" ? null : `${baseUrl.replace(/\/+$/, "")}/api/v1`;

const UpdateEndpoint = z
  .strictObject({
    description: Description.optional(),
    base_url: HttpsUrl.optional().openapi({ description: `${about.base_url}. ${fixedWhileUsed}` }),
    api_base_url: HttpsUrl.optional().openapi({ description: `${about.api_base_url}. ${fixedWhileUsed}` }),
    upload_base_url: HttpsUrl.optional().openapi({ description: `${about.upload_base_url}. ${fixedWhileUsed}` }),
    ca_cert_bundle: PemBundle.nullable()
      .optional()
      .openapi({ description: `${about.ca_cert_bundle}; null removes them. ${fixedWhileUsed}` }),
    forge: z.enum(forges).optional().openapi({
      description: "Fixed once created: only the endpoint's own forge is accepted (add a new endpoint for another forge)",
    }),
  })
  .openapi("UpdateGithubEndpoint");

/** The body's fields that say where credentials go, under their column names. */
const placeColumns = {
  base_url: "baseUrl",
  api_base_url: "apiBaseUrl",
  upload_base_url: "uploadBaseUrl",
  ca_cert_bundle: "caCertBundle",
} as const satisfies Record<string, (typeof endpointPlaceFields)[number]>;

/** The place fields a body would change on this row (a field sent with its stored value is no change). */
const movedFields = (row: EndpointRow, body: z.infer<typeof UpdateEndpoint>) =>
  (Object.keys(placeColumns) as (keyof typeof placeColumns)[]).filter((f) => body[f] !== undefined && body[f] !== row[placeColumns[f]]);

const view = (r: EndpointRow): z.infer<typeof EndpointSchema> => ({
  name: r.name,
  description: r.description,
  forge: r.forge,
  base_url: r.baseUrl,
  api_base_url: r.apiBaseUrl,
  upload_base_url: r.uploadBaseUrl,
  ca_cert_bundle: r.caCertBundle,
  created_at: iso(r.createdAt)!,
  updated_at: iso(r.updatedAt)!,
});

const routes = resourceRoutes({
  collection: "/github/endpoints",
  item: "/github/endpoints/{name}",
  tags: ["GitHub endpoints"],
  params: NameParam,
  view: EndpointSchema,
});

export const githubEndpointRoutes = createRouter()
  .openapi(routes.list("List GitHub endpoints", "Endpoints"), async (c) => {
    const rows = await listEndpoints(createDb(c.env));
    return c.json(rows.map(view), 200);
  })
  .openapi(routes.create("Add a GitHub Enterprise Server, Gitea or Forgejo endpoint", CreateEndpoint), async (c) => {
    const body = c.req.valid("json");
    const db = createDb(c.env);
    if (await endpointExists(db, body.name)) throw conflict("an endpoint with this name exists", { name: body.name });
    const t = now();
    const row = await insertEndpoint(db, {
      name: body.name,
      description: body.description,
      forge: body.forge,
      baseUrl: body.base_url,
      apiBaseUrl: body.api_base_url ?? defaultApiBaseUrl(body.forge, body.base_url)!,
      uploadBaseUrl: body.upload_base_url ?? "",
      caCertBundle: body.ca_cert_bundle ?? null,
      createdAt: t,
      updatedAt: t,
    });
    return c.json(view(row), 201);
  })
  .openapi(routes.show("Show a GitHub endpoint", "Endpoint"), async (c) => {
    const { name } = c.req.valid("param");
    const row = requireFound(await findEndpoint(createDb(c.env), name), "endpoint", name);
    return c.json(view(row), 200);
  })
  .openapi(
    routes.update("Update a GitHub endpoint (its URLs and CA bundle only while no credentials or entities use it)", UpdateEndpoint, {
      refusesInUse: true,
    }),
    async (c) => {
      const { name } = c.req.valid("param");
      const body = c.req.valid("json");
      const db = createDb(c.env);
      if (body.forge !== undefined) {
        // The forge decides which API every stored credential and entity speaks: it never changes.
        const current = requireFound(await findEndpoint(db, name), "endpoint", name);
        if (body.forge !== current.forge) {
          throw invalidBody([
            {
              path: "forge",
              message: `the endpoint is ${current.forge}; a forge is fixed once created: add a new endpoint with forge ${body.forge} instead`,
            },
          ]);
        }
      }
      const row = await updateEndpoint(db, name, {
        ...sentFields(body, { description: "description", ...placeColumns }),
        updatedAt: now(),
      });
      if (row) return c.json(view(row), 200);
      // Not updated: no such endpoint, or the body would move one that credentials use.
      const [current, use] = await Promise.all([findEndpoint(db, name), endpointUse(db, name)]);
      throw inUse(
        "endpoint is in use: its URLs and CA bundle cannot change while credentials or entities use it, as stored credentials would then be sent to the new place",
        {
          fields: movedFields(requireFound(current, "endpoint", name), body),
          credentials: use?.credentials ?? [],
          entities: use?.entities ?? [],
          next: "delete the credentials listed (and the entities that use them) first, or add a new endpoint with the new URLs and create credentials on it; credentials cannot move to another endpoint",
        },
      );
    },
  )
  .openapi(routes.remove("Delete a GitHub endpoint no credentials use"), async (c) => {
    const { name } = c.req.valid("param");
    if (name === DEFAULT_ENDPOINT) throw new ApiError(409, "the github.com endpoint cannot be deleted");
    const db = createDb(c.env);
    const use = requireFound(await endpointUse(db, name), "endpoint", name);
    if (use.credentials.length || use.entities.length) {
      throw inUse("endpoint is in use", { credentials: use.credentials, entities: use.entities });
    }
    await deleteEndpoint(db, name);
    return c.body(null, 204);
  });
