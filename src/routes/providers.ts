import { z } from "@hono/zod-openapi";
import { constantTimeEqual } from "../crypto/constant-time";
import { keyringFor } from "../crypto/keyring";
import { open, SealedValueError, seal } from "../crypto/secret-box";
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
} from "../db/providers/provider-store";
import type { Env } from "../env";
import { conflict, inUse } from "../http/errors";
import { Description, HttpsUrl, iso, NameParam, now, ResourceName, secureUrlRule, Timestamp } from "../http/openapi";
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

const urlAbout = `Base URL of the provider shim, where every request signed with its secret goes; ${secureUrlRule}`;
const boundWhileUsed =
  "Fixed while scale sets use the provider unless `secret` changes in the same request (a new shim gets a new secret: what was signed for one shim never goes to another host); a new url alone is then a 409 `in_use`";

const CreateProvider = z
  .strictObject({
    name: ResourceName,
    url: HttpsUrl.openapi({ description: urlAbout, example: "https://shim.example.com" }),
    secret: ProviderSecret.openapi({ description: "Shared HMAC key for requests both ways" }),
    description: Description.default(""),
    timeout_seconds: TimeoutSeconds.default(30),
  })
  .openapi("CreateProvider");

const UpdateProvider = z
  .strictObject({
    url: HttpsUrl.optional().openapi({ description: `${urlAbout}. ${boundWhileUsed}` }),
    secret: ProviderSecret.optional().openapi({
      description: "A new shared HMAC key, in effect at once both ways; required with a new url while scale sets use the provider",
    }),
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

/**
 * A secret sent for a provider, sealed for its row, and whether it replaces the current one: the
 * same secret sent again changes nothing; one that no longer opens (its key dropped without a
 * rotation) signs nothing, so anything sent replaces it.
 */
async function sealSecret(env: Env, row: ProviderRow, secret: string): Promise<{ secretEnc: string; changed: boolean }> {
  const keyring = await keyringFor(env);
  const context = secretContext.provider(row.id);
  const current = await open(keyring, row.secretEnc, context).catch((err) => {
    if (err instanceof SealedValueError) return null;
    throw err;
  });
  const changed = current === null || !(await constantTimeEqual(secret, current));
  return { secretEnc: await seal(keyring, secret, context), changed };
}

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
  .openapi(
    routes.update("Update a provider shim (its URL, while scale sets use it, only with a new secret)", UpdateProvider, {
      refusesInUse: true,
    }),
    async (c) => {
      const { name } = c.req.valid("param");
      const body = c.req.valid("json");
      const db = createDb(c.env);
      const row = requireFound(await findProvider(db, name), "provider", name);
      const secret = body.secret === undefined ? null : await sealSecret(c.env, row, body.secret);
      const updated = await updateProvider(
        db,
        row.id,
        {
          ...sentFields(body, { url: "url", description: "description", timeout_seconds: "timeoutSeconds" }),
          ...(secret && { secretEnc: secret.secretEnc }),
          updatedAt: now(),
        },
        // A new shim comes with its own secret: only then may the url move under scale sets.
        { urlFixedWhileUsed: !secret?.changed },
      );
      if (updated) return c.json(view(updated), 200);
      // Not updated: gone meanwhile, or a new url without a new secret while scale sets use the provider.
      requireFound(await providerIdByName(db, name), "provider", name);
      throw inUse(
        "provider is in use: its url cannot change while scale sets use it unless the secret changes in the same request, as requests signed for one shim would then go to another host",
        {
          fields: ["url"],
          url: row.url,
          scale_sets: await providerUsers(db, row.id),
          next: "send the new shim's own secret with the new url in the same request (edgerunner provider update --shim-url URL --secret-from-file FILE), or move the scale sets listed to another provider first (PUT /api/v1/scalesets/{id} with provider_name)",
        },
      );
    },
  )
  .openapi(routes.remove("Delete a provider no scale set uses"), async (c) => {
    const { name } = c.req.valid("param");
    const db = createDb(c.env);
    const id = requireFound(await providerIdByName(db, name), "provider", name);
    const users = await providerUsers(db, id);
    if (users.length) throw inUse("provider is used by scale sets", { scale_sets: users });
    await deleteProvider(db, id);
    return c.body(null, 204);
  });
