import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { HTTPException } from "hono/http-exception";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { currentRequestId, errorText, logError } from "../observability/log";

/**
 * Every error code the API answers with: what a client branches on (the message is for people
 * and may change). A closed set, so a client can handle all of them.
 */
export const errorCodes = [
  "bad_request",
  "invalid_body",
  "invalid_parameter",
  "malformed_json",
  "unsupported_media_type",
  "payload_too_large",
  "unauthorized",
  "invalid_signature",
  "forbidden",
  "not_found",
  "conflict",
  "in_use",
  "invalid_transition",
  "credentials_refused",
  "unprocessable",
  "rate_limited",
  "internal",
  "upstream_error",
  "upstream_rate_limited",
  "unavailable",
] as const;

export const ErrorCode = z.enum(errorCodes).openapi("ErrorCode", {
  description:
    "bad_request: the request cannot be acted on as sent; invalid_body: the JSON body breaks its schema (details lists the fields); " +
    "invalid_parameter: a path, query or header value is invalid (details lists them); malformed_json: the body is not JSON; " +
    "unsupported_media_type: the body is not application/json; payload_too_large: the body is over the route's limit; " +
    "unauthorized: missing or wrong token; invalid_signature: a signed request (webhook, provider callback) did not verify; " +
    "forbidden: authenticated but not allowed; not_found: no such resource or path; conflict: clashes with existing data (a name taken); " +
    "in_use: cannot delete or change something other resources still use; invalid_transition: not allowed from the resource's current status; " +
    "credentials_refused: GitHub refuses the credentials involved; unprocessable: understood but cannot be done (details says why); " +
    "rate_limited: too many attempts from this client, see Retry-After; internal: a bug on our side; " +
    "upstream_error: GitHub or a provider shim failed; upstream_rate_limited: GitHub's rate limit, see Retry-After; " +
    "unavailable: the feature is not configured on this deployment",
});
export type ErrorCode = z.infer<typeof ErrorCode>;

export const ErrorSchema = z
  .object({
    error: z.string().openapi({ description: "What went wrong, for people", example: "invalid request body" }),
    code: ErrorCode,
    details: z
      .union([z.record(z.string(), z.unknown()), z.array(z.unknown())])
      .nullable()
      .openapi({ description: "Field-level problems or other context; null when there is none" }),
    request_id: z.string().openapi({
      description: "This request's id (also the X-Request-Id header): every log line written while handling it carries it",
      example: "8f1b2c3d4e5f6a7b-AMS",
    }),
  })
  .openapi("Error");

export type ErrorBody = z.infer<typeof ErrorSchema>;

const CODE_BY_STATUS: Partial<Record<number, ErrorCode>> = {
  400: "bad_request",
  401: "unauthorized",
  403: "forbidden",
  404: "not_found",
  409: "conflict",
  413: "payload_too_large",
  415: "unsupported_media_type",
  422: "unprocessable",
  429: "rate_limited",
  500: "internal",
  502: "upstream_error",
  503: "unavailable",
};

const codeForStatus = (status: number): ErrorCode => CODE_BY_STATUS[status] ?? (status < 500 ? "bad_request" : "internal");

/** A failure the client can act on; rendered as the Error shape with its status. */
export class ApiError extends Error {
  readonly code: ErrorCode;
  readonly headers: Record<string, string> | undefined;
  constructor(
    readonly status: ContentfulStatusCode,
    message: string,
    readonly details?: unknown,
    /** `code` defaults from the status; `headers` are extra response headers, e.g. Retry-After. */
    opts: { code?: ErrorCode; headers?: Record<string, string> } = {},
  ) {
    super(message);
    this.code = opts.code ?? codeForStatus(status);
    this.headers = opts.headers;
  }
}

export const notFound = (what: string, id: string) => new ApiError(404, `${what} not found`, { id });
export const conflict = (message: string, details?: unknown) => new ApiError(409, message, details);
/** Refused because other things still depend on it: the client removes those first. */
export const inUse = (message: string, details?: unknown) => new ApiError(409, message, details, { code: "in_use" });
export const invalidTransition = (status: ContentfulStatusCode, message: string, details?: unknown) =>
  new ApiError(status, message, details, { code: "invalid_transition" });
/** A body that parsed but names something that does not exist or does not fit: field-level problems like the schema's. */
export const invalidBody = (problems: FieldProblem[]) => new ApiError(400, "invalid request body", problems, { code: "invalid_body" });

export interface FieldProblem {
  path: string;
  message: string;
}

export function zodDetails(error: z.ZodError): FieldProblem[] {
  return error.issues.map((issue) => ({
    path: issue.path.map(String).join(".") || "(root)",
    message: issue.message,
  }));
}

/**
 * The request id errors and logs carry: set by the request-id middleware (src/http/request-id.ts)
 * for every request; the fallback covers a response built before it ran.
 */
function requestIdOf(c: Context): string {
  const fromContext = (c.get as (key: string) => unknown)("requestId");
  return typeof fromContext === "string" ? fromContext : (currentRequestId() ?? crypto.randomUUID());
}

const asDetails = (details: unknown): ErrorBody["details"] =>
  details === undefined || details === null ? null : typeof details === "object" ? (details as ErrorBody["details"]) : { value: details };

/** The one place an error body is built: every JSON error answer goes through here. */
export function errorResponse(c: Context, err: ApiError): Response {
  const body: ErrorBody = { error: err.message, code: err.code, details: asDetails(err.details), request_id: requestIdOf(c) };
  return c.json(body, err.status, err.headers);
}

const SQLITE_CONFLICT = /UNIQUE constraint failed|FOREIGN KEY constraint failed|SQLITE_CONSTRAINT/;

function causeMessages(err: unknown): string {
  const parts: string[] = [];
  for (let e: unknown = err, depth = 0; e && depth < 5; depth++) {
    if (e instanceof Error) {
      parts.push(e.message);
      e = (e as { cause?: unknown }).cause;
    } else break;
  }
  return parts.join(" | ");
}

/** What the framework throws (hono's JSON parsing, @hono/zod-openapi's media type gate), in our terms. */
function fromHttpException(err: HTTPException): ApiError {
  const status = err.status as ContentfulStatusCode;
  if (status === 400 && /JSON/i.test(err.message)) return new ApiError(400, "malformed JSON body", null, { code: "malformed_json" });
  if (status === 415) return new ApiError(415, "unsupported media type: send application/json", null);
  return new ApiError(status, err.message || "request rejected", null);
}

/**
 * Turns anything thrown by a handler into a JSON error. Constraint violations that slip
 * past the handlers' own checks (a concurrent insert of the same name) are conflicts, not 500s.
 */
export function renderError(err: unknown, c: Context): Response {
  if (err instanceof ApiError) return errorResponse(c, err);
  if (err instanceof HTTPException) return errorResponse(c, fromHttpException(err));
  const messages = causeMessages(err);
  if (SQLITE_CONFLICT.test(messages)) {
    return errorResponse(c, new ApiError(409, "conflicts with existing data", { reason: messages.match(SQLITE_CONFLICT)?.[0] }));
  }
  logError({ event: "unhandled_error", path: c.req.path, error: errorText(err) });
  return errorResponse(c, new ApiError(500, "internal error"));
}
