import { createRoute, z } from "@hono/zod-openapi";
import { createDb } from "../db/client";
import {
  deleteProvider,
  findProvider,
  insertProvider,
  listProviders,
  providerIdByName,
  providerUsers,
  updateProvider,
  type ProviderRow,
} from "../db/provider-store";
import { keyringFor } from "../crypto/keyring";
import { seal } from "../crypto/secret-box";
import { secretContext } from "../crypto/secret-contexts";
import { conflict, inUse, notFound } from "../http/errors";
import { createRouter } from "../http/router";
import {
  conflictResponse,
  Description,
  errorResponses,
  HttpUrl,
  iso,
  jsonBody,
  jsonResponse,
  NameParam,
  noContent,
  notFoundResponse,
  now,
  ResourceName,
  Timestamp,
} from "../http/openapi";

const ProviderSecret = z
  .string()
  .min(16, "use at least 16 characters: this key signs every request to and from the shim")
  .max(512);

const TimeoutSeconds = z
  .number()
  .int()
  .min(1)
  .max(600)
  .openapi({
    description:
      "How long one call to the shim may take (seconds). A create that takes longer counts as failed and is retried; a shim whose clouds are slow should answer `202` and call back instead.",
    example: 30,
  });

const CreateProvider = z
  .strictObject({
    name: ResourceName,
    url: HttpUrl.openapi({ description: "Base URL of the provider shim", example: "https://shim.example.com" }),
    secret: ProviderSecret.openapi({ description: "Shared HMAC key for requests both ways" }),
    description: Description.default(""),
    timeout_seconds: TimeoutSeconds.default(30),
  })
  .openapi("CreateProvider");

const UpdateProvider = z
  .strictObject({
    url: HttpUrl.optional(),
    secret: ProviderSecret.optional(),
    description: Description.optional(),
    timeout_seconds: TimeoutSeconds.optional(),
  })
  .openapi("UpdateProvider");

const ProviderSchema = z
  .object({
    id: z.uuid(),
    name: z.string(),
    url: z.string(),
    description: z.string(),
    timeout_seconds: z.number().int(),
    has_secret: z.boolean(),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .openapi("Provider");

const view = (r: ProviderRow): z.infer<typeof ProviderSchema> => ({
  id: r.id,
  name: r.name,
  url: r.url,
  description: r.description,
  timeout_seconds: r.timeoutSeconds,
  has_secret: r.secretEnc.length > 0,
  created_at: iso(r.createdAt)!,
  updated_at: iso(r.updatedAt)!,
});

const tags = ["Providers"];

export const providerRoutes = createRouter()
  .openapi(
    createRoute({
      method: "get",
      path: "/providers",
      tags,
      summary: "List provider shims",
      responses: { 200: jsonResponse(z.array(ProviderSchema), "Providers"), ...errorResponses },
    }),
    async (c) => {
      const rows = await listProviders(createDb(c.env));
      return c.json(rows.map(view), 200);
    },
  )
  .openapi(
    createRoute({
      method: "post",
      path: "/providers",
      tags,
      summary: "Register a provider shim",
      request: { body: jsonBody(CreateProvider) },
      responses: { 201: jsonResponse(ProviderSchema, "Created"), ...errorResponses, ...conflictResponse },
    }),
    async (c) => {
      const body = c.req.valid("json");
      const db = createDb(c.env);
      if (await providerIdByName(db, body.name)) throw conflict("a provider with this name exists", { name: body.name });
      const id = crypto.randomUUID();
      const t = now();
      const row = await insertProvider(db, {
        id,
        name: body.name,
        url: body.url,
        description: body.description,
        timeoutSeconds: body.timeout_seconds,
        secretEnc: await seal(await keyringFor(c.env), body.secret, secretContext.provider(id)),
        createdAt: t,
        updatedAt: t,
      });
      return c.json(view(row), 201);
    },
  )
  .openapi(
    createRoute({
      method: "get",
      path: "/providers/{name}",
      tags,
      summary: "Show a provider shim",
      request: { params: NameParam },
      responses: { 200: jsonResponse(ProviderSchema, "Provider"), ...errorResponses, ...notFoundResponse },
    }),
    async (c) => {
      const { name } = c.req.valid("param");
      const row = await findProvider(createDb(c.env), name);
      if (!row) throw notFound("provider", name);
      return c.json(view(row), 200);
    },
  )
  .openapi(
    createRoute({
      method: "put",
      path: "/providers/{name}",
      tags,
      summary: "Update a provider shim's URL, secret, timeout or description",
      request: { params: NameParam, body: jsonBody(UpdateProvider) },
      responses: { 200: jsonResponse(ProviderSchema, "Updated"), ...errorResponses, ...notFoundResponse },
    }),
    async (c) => {
      const { name } = c.req.valid("param");
      const body = c.req.valid("json");
      const db = createDb(c.env);
      const row = await findProvider(db, name);
      if (!row) throw notFound("provider", name);
      const updated = await updateProvider(db, row.id, {
        ...(body.url !== undefined && { url: body.url }),
        ...(body.description !== undefined && { description: body.description }),
        ...(body.timeout_seconds !== undefined && { timeoutSeconds: body.timeout_seconds }),
        ...(body.secret !== undefined && {
          secretEnc: await seal(await keyringFor(c.env), body.secret, secretContext.provider(row.id)),
        }),
        updatedAt: now(),
      });
      return c.json(view(updated), 200);
    },
  )
  .openapi(
    createRoute({
      method: "delete",
      path: "/providers/{name}",
      tags,
      summary: "Delete a provider no scale set uses",
      request: { params: NameParam },
      responses: { ...noContent, ...errorResponses, ...notFoundResponse, ...conflictResponse },
    }),
    async (c) => {
      const { name } = c.req.valid("param");
      const db = createDb(c.env);
      const id = await providerIdByName(db, name);
      if (!id) throw notFound("provider", name);
      const users = await providerUsers(db, id);
      if (users.length) throw inUse("provider is used by scale sets", { scale_sets: users });
      await deleteProvider(db, id);
      return c.body(null, 204);
    },
  );
