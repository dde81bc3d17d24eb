import { z } from "@hono/zod-openapi";
import { keyringFor } from "../crypto/keyring";
import { seal } from "../crypto/secret-box";
import { secretContext } from "../crypto/secret-contexts";
import { createDb } from "../db/client";
import {
  deleteProvider,
  findProvider,
  insertProvider,
  listProviders,
  type ProviderRow,
  providerIdByName,
  providerUsers,
  updateProvider,
} from "../db/provider-store";
import { conflict, inUse } from "../http/errors";
import { Description, HttpUrl, iso, NameParam, now, ResourceName, Timestamp } from "../http/openapi";
import { requireFound } from "../http/require-found";
import { resourceRoutes } from "../http/resource-routes";
import { createRouter } from "../http/router";
import { sentFields } from "../http/sent-fields";

const ProviderSecret = z.string().min(16, "use at least 16 characters: this key signs every request to and from the shim").max(512);

const TimeoutSeconds = z.number().int().min(1).max(600).openapi({
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

const routes = resourceRoutes({
  collection: "/providers",
  item: "/providers/{name}",
  tags: ["Providers"],
  params: NameParam,
  view: ProviderSchema,
});

export const providerRoutes = createRouter()
  .openapi(routes.list("List provider shims", "Providers"), async (c) => {
    const rows = await listProviders(createDb(c.env));
    return c.json(rows.map(view), 200);
  })
  .openapi(routes.create("Register a provider shim", CreateProvider), async (c) => {
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
  })
  .openapi(routes.show("Show a provider shim", "Provider"), async (c) => {
    const { name } = c.req.valid("param");
    return c.json(view(requireFound(await findProvider(createDb(c.env), name), "provider", name)), 200);
  })
  .openapi(routes.update("Update a provider shim's URL, secret, timeout or description", UpdateProvider), async (c) => {
    const { name } = c.req.valid("param");
    const body = c.req.valid("json");
    const db = createDb(c.env);
    const row = requireFound(await findProvider(db, name), "provider", name);
    const updated = await updateProvider(db, row.id, {
      ...sentFields(body, { url: "url", description: "description", timeout_seconds: "timeoutSeconds" }),
      ...(body.secret !== undefined && {
        secretEnc: await seal(await keyringFor(c.env), body.secret, secretContext.provider(row.id)),
      }),
      updatedAt: now(),
    });
    return c.json(view(updated), 200);
  })
  .openapi(routes.remove("Delete a provider no scale set uses"), async (c) => {
    const { name } = c.req.valid("param");
    const db = createDb(c.env);
    const id = requireFound(await providerIdByName(db, name), "provider", name);
    const users = await providerUsers(db, id);
    if (users.length) throw inUse("provider is used by scale sets", { scale_sets: users });
    await deleteProvider(db, id);
    return c.body(null, 204);
  });
