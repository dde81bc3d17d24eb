import { createRoute, z } from "@hono/zod-openapi";
import type { MiddlewareHandler } from "hono";
import { keyringFor } from "../crypto/keyring";
import { open } from "../crypto/secret-box";
import { secretContext } from "../crypto/secret-contexts";
import { createDb } from "../db/client";
import { providerSecretByName } from "../db/providers/provider-store";
import { instanceOwner } from "../db/runner/instance-lookups";
import type { AppEnv } from "../env";
import { ApiError } from "../http/errors";
import { BodyTooLarge, readRequestBody } from "../http/limited-body";
import { errorJson, jsonBody, jsonResponse } from "../http/openapi";
import { createRouter } from "../http/router";
import { logEvent } from "../observability/log";
import { ShimCallback } from "../providers/shim-protocol";
import { requestTarget, verifySignature } from "../providers/shim-signing";
import { scaleSetObject } from "../scaleset/stub";

/** Route pattern, for the admin-auth exemption in app.ts: these callers sign with the provider secret instead. */
export const PROVIDER_CALLBACK_PATH = /^\/api\/v1\/providers\/[^/]+\/callbacks\/?$/;

/** The provider a request's signature was checked against, for the handler after the middleware. */
const signedBy = new WeakMap<Request, { id: string; name: string }>();

// Callers naming a provider that does not exist are checked against this instead, so they get
// the same 401 (and take about as long) as callers with a wrong secret: existence does not leak.
// Made on first use: Workers forbid random values in global scope.
let decoy: string | undefined;
const decoySecret = () => (decoy ??= crypto.randomUUID() + crypto.randomUUID());

const unauthorized = (reason: string) => new ApiError(401, "unauthorized", { reason }, { code: "invalid_signature" });

/**
 * A callback is one small JSON object; a bigger body is refused before it is hashed or parsed
 * (its rest read and dropped first, so the shim reads the 413 rather than a reset).
 */
export const MAX_CALLBACK_BYTES = 256 * 1024;
const tooLarge = () => new ApiError(413, "body too large", { max_bytes: MAX_CALLBACK_BYTES });

/**
 * Authenticates a callback by its signature before anything else reads the body: an unsigned
 * caller learns nothing (not whether the provider exists, nor what the body should look like).
 */
const providerSignature: MiddlewareHandler<AppEnv> = async (c, next) => {
  let body: Uint8Array;
  try {
    body = await readRequestBody(c.req.raw, MAX_CALLBACK_BYTES);
  } catch (err) {
    if (err instanceof BodyTooLarge) throw tooLarge();
    throw err;
  }
  // The route's JSON validator reads the body after this: it gets the bytes read here.
  c.req.raw = new Request(c.req.raw, { body });
  const name = c.req.param("name") ?? "";
  const row = await providerSecretByName(createDb(c.env), name);
  const secret = row ? await open(await keyringFor(c.env), row.secretEnc, secretContext.provider(row.id)) : decoySecret();
  const check = await verifySignature(
    secret,
    { method: c.req.method, pathWithQuery: requestTarget(c.req.url), body },
    { timestamp: c.req.header("x-edgerunner-timestamp"), signature: c.req.header("x-edgerunner-signature") },
  );
  if (!check.ok || !row) {
    const reason = check.ok ? "bad_signature" : check.reason;
    logEvent({ event: "provider_callback_rejected", provider: name, reason });
    throw unauthorized(reason);
  }
  signedBy.set(c.req.raw, { id: row.id, name: row.name });
  await next();
};

const CallbackAccepted = z
  .object({ accepted: z.boolean().openapi({ description: "false when the scale set had nothing waiting for this operation" }) })
  .openapi("ShimCallbackAccepted");

const route = createRoute({
  method: "post",
  path: "/providers/{name}/callbacks",
  tags: ["Provider shims"],
  summary: "Result of an asynchronous shim operation (called by the provider shim)",
  description:
    "A provider shim that answered 202 {operation_id} posts the outcome here, signed with the provider's secret " +
    "(see docs/provider-shim-protocol.md). Not for the admin token. A wrong, missing or stale signature, and an " +
    "unknown provider name, are all answered 401 alike. The callback is handed to the scale set that owns the instance.",
  middleware: [providerSignature] as const,
  security: [{ providerSignature: [] }],
  request: {
    params: z.object({
      name: z
        .string()
        .min(1)
        .max(64)
        .openapi({ param: { name: "name", in: "path" }, example: "lxd" }),
    }),
    headers: z.object({
      "x-edgerunner-timestamp": z.string().openapi({ description: "Unix seconds; at most 300 s from the coordinator's clock" }),
      "x-edgerunner-signature": z.string().openapi({
        description: 'sha256=<hex HMAC-SHA256(provider secret, timestamp "\\n" "POST" "\\n" path "\\n" raw body)>',
      }),
    }),
    body: jsonBody(ShimCallback),
  },
  responses: {
    200: jsonResponse(CallbackAccepted, "Handed to the scale set"),
    400: errorJson("Signed, but the body is not a valid callback"),
    401: errorJson("Missing, malformed, stale or wrong signature, or unknown provider"),
    404: errorJson("This provider has no instance with that name"),
    413: errorJson("Body larger than 256 KiB"),
    415: errorJson("Body is not application/json"),
  },
});

export const providerCallbackRoutes = createRouter().openapi(route, async (c) => {
  const cb = c.req.valid("json");
  const provider = signedBy.get(c.req.raw);
  if (!provider) throw unauthorized("not_verified");
  const owner = await instanceOwner(createDb(c.env), cb.instance_name);
  // An instance of another provider gets the same answer as none at all: a shim sees only its own machines.
  if (!owner || owner.providerId !== provider.id) {
    logEvent({
      event: "provider_callback_unknown_instance",
      provider: provider.name,
      instance: cb.instance_name,
      operation_id: cb.operation_id,
    });
    throw new ApiError(404, "instance not found", { provider: provider.name, instance_name: cb.instance_name });
  }
  const { accepted } = await scaleSetObject(c.env, owner.scaleSetId).providerCallback(cb);
  logEvent({
    event: "provider_callback",
    provider: provider.name,
    scale_set: owner.scaleSetId,
    instance: cb.instance_name,
    operation_id: cb.operation_id,
    outcome: cb.error ? "error" : cb.result ? "result" : "done",
    accepted,
    ...(cb.error && { error: cb.error.message.slice(0, 500) }),
  });
  return c.json({ accepted }, 200);
});
