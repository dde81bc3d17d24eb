import { createRoute, z } from "@hono/zod-openapi";
import { hashApiToken, newApiToken, TOKEN_PREFIX } from "../auth/api-token";
import { forgetToken } from "../auth/token-cache";
import { type ApiTokenRow, activeTokenNamed, insertToken, listTokens, revokeToken } from "../db/access/api-token-store";
import { tokenScopes } from "../db/access/schema";
import { createDb } from "../db/client";
import { adminOnly } from "../http/admin-auth";
import { conflict, invalidBody } from "../http/errors";
import {
  conflictResponse,
  errorResponses,
  IdParam,
  iso,
  jsonBody,
  jsonResponse,
  noContent,
  notFoundResponse,
  now,
  ResourceName,
  Timestamp,
} from "../http/openapi";
import { requireFound } from "../http/require-found";
import { createRouter } from "../http/router";
import { logEvent } from "../observability/log";

/**
 * Named API tokens: created with a scope (`read` or `admin`), shown once, stored as a hash
 * (src/auth/api-token.ts), listed without their value, revoked by id. Only an admin (ADMIN_TOKEN,
 * an admin token, an admin Access identity) manages them, reading the list included.
 */

const Scope = z.enum(tokenScopes).openapi({ description: "`read`: GET on every admin route and /metrics; `admin`: everything" });

const CreateToken = z
  .strictObject({
    name: ResourceName.openapi({ description: "Unique among tokens not revoked", example: "prometheus" }),
    scope: Scope,
    expires_at: Timestamp.optional().openapi({ description: "When the token stops working; never when absent" }),
  })
  .openapi("CreateApiToken");

const TokenSchema = z
  .object({
    id: z.uuid(),
    name: z.string(),
    scope: Scope,
    created_at: Timestamp,
    created_by: z.string().openapi({ description: "Who created it, as the audit trail names them" }),
    expires_at: Timestamp.nullable(),
    last_used_at: Timestamp.nullable().openapi({ description: "Updated at most once a minute" }),
    revoked_at: Timestamp.nullable(),
  })
  .openapi("ApiToken");

const CreatedTokenSchema = TokenSchema.extend({
  token: z.string().openapi({
    description: `The token (\`${TOKEN_PREFIX}…\`): shown only in this answer, never again`,
    example: `${TOKEN_PREFIX}3q2-7w…`,
  }),
}).openapi("CreatedApiToken");

const view = (r: ApiTokenRow): z.infer<typeof TokenSchema> => ({
  id: r.id,
  name: r.name,
  scope: r.scope,
  created_at: iso(r.createdAt)!,
  created_by: r.createdBy,
  expires_at: iso(r.expiresAt),
  last_used_at: iso(r.lastUsedAt),
  revoked_at: iso(r.revokedAt),
});

const tags = ["API tokens"];

const router = createRouter();
router.use("/tokens", adminOnly);
router.use("/tokens/*", adminOnly);

export const tokenRoutes = router
  .openapi(
    createRoute({
      method: "get",
      path: "/tokens",
      tags,
      summary: "List API tokens (never their value), revoked ones included",
      responses: { 200: jsonResponse(z.array(TokenSchema), "API tokens, newest first"), ...errorResponses },
    }),
    async (c) => c.json((await listTokens(createDb(c.env))).map(view), 200),
  )
  .openapi(
    createRoute({
      method: "post",
      path: "/tokens",
      tags,
      summary: "Create an API token: its value is in this answer only",
      request: { body: jsonBody(CreateToken) },
      responses: {
        201: jsonResponse(CreatedTokenSchema, "Created; keep `token`, it is not shown again"),
        ...errorResponses,
        ...conflictResponse,
      },
    }),
    async (c) => {
      const body = c.req.valid("json");
      const t = now();
      const expiresAt = body.expires_at === undefined ? null : Date.parse(body.expires_at);
      if (expiresAt !== null && expiresAt <= t) throw invalidBody([{ path: "expires_at", message: "must be in the future" }]);
      const db = createDb(c.env);
      if (await activeTokenNamed(db, body.name)) throw conflict("an API token with this name exists", { name: body.name });
      const token = newApiToken();
      const row = await insertToken(db, {
        id: crypto.randomUUID(),
        name: body.name,
        scope: body.scope,
        tokenHash: await hashApiToken(token),
        createdAt: t,
        createdBy: c.get("principal")?.actor ?? "unknown",
        expiresAt,
      });
      logEvent({ event: "api_token_created", token_id: row.id, token_name: row.name, scope: row.scope });
      return c.json({ ...view(row), token }, 201);
    },
  )
  .openapi(
    createRoute({
      method: "delete",
      path: "/tokens/{id}",
      tags,
      summary: "Revoke an API token (its row stays, marked revoked)",
      request: { params: IdParam },
      responses: { ...noContent, ...errorResponses, ...notFoundResponse },
    }),
    async (c) => {
      const { id } = c.req.valid("param");
      const row = requireFound(await revokeToken(createDb(c.env), id, now()), "API token", id);
      forgetToken(row.id);
      logEvent({ event: "api_token_revoked", token_id: row.id, token_name: row.name });
      return c.body(null, 204);
    },
  );
