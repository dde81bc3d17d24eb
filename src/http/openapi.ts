import { z } from "@hono/zod-openapi";
import { isLoopbackHost } from "../lib/loopback-host";
import { ErrorSchema } from "./errors";

/**
 * The pieces the admin API's routes are declared with: shared field types and parameters,
 * and the request and response entries of the OpenAPI document. One definition gives the
 * validation, the TypeScript type and the documentation.
 */

export const iso = (ms: number | null | undefined): string | null => (ms == null ? null : new Date(ms).toISOString());

export const Timestamp = z.iso.datetime().openapi({ example: "2026-11-22T10:00:00.000Z" });

/** An error response in the OpenAPI document: every one has the Error shape. */
export const errorJson = (description: string) => ({ description, content: { "application/json": { schema: ErrorSchema } } }) as const;

/** Responses every admin route can give besides its own. */
export const errorResponses = {
  400: errorJson("Invalid request"),
  401: errorJson("Missing or wrong admin token, API token or Access JWT"),
  403: errorJson(
    "The caller's scope does not allow this: a `read` token or Access identity writing, or anyone but an admin managing tokens",
  ),
  429: errorJson("Too many wrong tokens from this client: refused until Retry-After"),
} as const;

export const notFoundResponse = {
  404: errorJson("Not found"),
} as const;

export const conflictResponse = {
  409: errorJson("Name taken, or still in use"),
} as const;

export const jsonBody = <T extends z.ZodType>(schema: T) => ({
  required: true,
  content: { "application/json": { schema } },
});

export const jsonResponse = <T extends z.ZodType>(schema: T, description: string) => ({
  description,
  content: { "application/json": { schema } },
});

export const noContent = { 204: { description: "Deleted" } } as const;

/**
 * An integer in a query string or path: decimal digits only, so `0x10`, `1e2`, `+16`, ` 16`
 * and `16.0` are refused rather than read as numbers (what z.coerce.number and Number() do).
 */
export const decimalInt = (min: number, max: number) =>
  z
    .string()
    .regex(/^\d{1,16}$/, "a decimal integer (digits only)")
    .transform(Number)
    .pipe(z.int().min(min).max(max))
    .openapi({ type: "integer", minimum: min, maximum: max });

export const IdParam = z.object({
  id: z.uuid().openapi({ param: { name: "id", in: "path" }, example: "0f0c2a4e-8a4b-4f6e-9d55-2b8c1b1f5b1e" }),
});

/** Names of things Edgerunner owns (endpoints, credentials, providers, scale sets). */
export const ResourceName = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, "letters, digits, '.', '_' and '-', starting with a letter or digit");

export const NameParam = z.object({
  name: ResourceName.openapi({ param: { name: "name", in: "path" } }),
});

export const HttpUrl = z
  .url({ protocol: /^https?$/ })
  .max(2048)
  .transform((u) => u.replace(/\/+$/, ""));

/**
 * An HttpUrl that is https://, or http:// on a loopback host only: for URLs that stored
 * credentials are sent to, which must not cross a network in the clear.
 */
export const HttpsUrl = HttpUrl.refine((u) => {
  const url = new URL(u);
  return url.protocol === "https:" || isLoopbackHost(url.hostname);
}, "use https:// (http:// only for a loopback host: 127.0.0.0/8, ::1, localhost)");

/** What HttpsUrl takes, for the descriptions of the fields that use it. */
export const secureUrlRule = "https://, or http:// only for a loopback host (127.0.0.0/8, ::1, localhost: development and tests)";

export const Description = z.string().max(1024);

/** A webhook secret as a user sets it (an entity's hook, a GitHub App's webhook). */
export const WebhookSecret = z.string().min(8, "use at least 8 characters").max(512);

export const now = () => Date.now();
