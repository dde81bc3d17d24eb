import { z } from "@hono/zod-openapi";
import { createDb } from "../db/client";
import {
  deleteEndpoint,
  type EndpointRow,
  endpointExists,
  endpointUse,
  findEndpoint,
  insertEndpoint,
  listEndpoints,
  updateEndpoint,
} from "../db/github-endpoint-store";
import { DEFAULT_ENDPOINT } from "../github/default-endpoint";
import { ApiError, conflict, inUse } from "../http/errors";
import { Description, HttpUrl, iso, NameParam, now, ResourceName, Timestamp } from "../http/openapi";
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
    base_url: z.string(),
    api_base_url: z.string(),
    upload_base_url: z.string(),
    ca_cert_bundle: z.string().nullable(),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .openapi("GithubEndpoint");

const CreateEndpoint = z
  .strictObject({
    name: ResourceName,
    description: Description.default(""),
    base_url: HttpUrl.openapi({ example: "https://ghes.example.com" }),
    api_base_url: HttpUrl.openapi({ example: "https://ghes.example.com/api/v3" }),
    upload_base_url: HttpUrl.optional(),
    ca_cert_bundle: PemBundle.optional(),
  })
  .openapi("CreateGithubEndpoint");

const UpdateEndpoint = z
  .strictObject({
    description: Description.optional(),
    base_url: HttpUrl.optional(),
    api_base_url: HttpUrl.optional(),
    upload_base_url: HttpUrl.optional(),
    ca_cert_bundle: PemBundle.nullable().optional(),
  })
  .openapi("UpdateGithubEndpoint");

const view = (r: EndpointRow): z.infer<typeof EndpointSchema> => ({
  name: r.name,
  description: r.description,
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
  .openapi(routes.create("Add a GitHub Enterprise Server endpoint", CreateEndpoint), async (c) => {
    const body = c.req.valid("json");
    const db = createDb(c.env);
    if (await endpointExists(db, body.name)) throw conflict("an endpoint with this name exists", { name: body.name });
    const t = now();
    const row = await insertEndpoint(db, {
      name: body.name,
      description: body.description,
      baseUrl: body.base_url,
      apiBaseUrl: body.api_base_url,
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
  .openapi(routes.update("Update a GitHub endpoint", UpdateEndpoint), async (c) => {
    const { name } = c.req.valid("param");
    const body = c.req.valid("json");
    const row = await updateEndpoint(createDb(c.env), name, {
      ...sentFields(body, {
        description: "description",
        base_url: "baseUrl",
        api_base_url: "apiBaseUrl",
        upload_base_url: "uploadBaseUrl",
        ca_cert_bundle: "caCertBundle",
      }),
      updatedAt: now(),
    });
    return c.json(view(requireFound(row, "endpoint", name)), 200);
  })
  .openapi(routes.remove("Delete a GitHub endpoint no credentials use"), async (c) => {
    const { name } = c.req.valid("param");
    if (name === DEFAULT_ENDPOINT) throw new ApiError(409, "the github.com endpoint cannot be deleted");
    const db = createDb(c.env);
    const use = requireFound(await endpointUse(db, name), "endpoint", name);
    if (use.credentials.length || use.hasEntities) {
      throw inUse("endpoint is in use", { credentials: use.credentials });
    }
    await deleteEndpoint(db, name);
    return c.body(null, 204);
  });
