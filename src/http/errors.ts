import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { HTTPException } from "hono/http-exception";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { errorText, logError } from "../observability/log";
import { currentRequestId } from "../observability/request-context";

/**
 * What a client can branch on. The message is for people and may change; the code may not.
 * Most follow from the status; a few name a case a client treats differently from its status'.
 */
export const errorCodes = [
  "invalid_request",
  "invalid_body",
  "malformed_json",
  "invalid_transition",
  "unauthorized",
  "forbidden",
  "not_found",
  "conflict",
  "in_use",
  "payload_too_large",
  "unsupported_media_type",
  "unprocessable",
  "rate_limited",
  "internal",
  "upstream_failed",
  "unavailable",
] as const;

export type ErrorCode = (typeof errorCodes)[number];

const CODE_OF_STATUS: Partial<Record<number, ErrorCode>> = {
  400: "invalid_request",
  401: "unauthorized",
  403: "forbidden",
  404: "not_found",
  409: "conflict",
  413: "payload_too_large",
  415: "unsupported_media_type",
  422: "unprocessable",
  429: "rate_limited",
  500: "internal",
  502: "upstream_failed",
  503: "unavailable",
};

export const codeForStatus = (status: number): ErrorCode => CODE_OF_STATUS[status] ?? (status >= 500 ? "internal" : "invalid_request");

export const ErrorSchema = z
  .object({
    error: z.string().openapi({ description: "What went wrong, for people", example: "invalid request body" }),
    code: z.enum(errorCodes).openapi({ description: "What went wrong, for programs", example: "invalid_body" }),
    details: z
      .union([z.record(z.string(), z.unknown()), z.array(z.unknown())])
      .nullable()
      .openapi({ description: "Field-level problems or other context; null when there is none" }),
    request_id: z.string().openapi({
      description: "This request's id, also in the X-Request-Id header and in every log line the request wrote",
      example: "8c3f2c1b6f2e4b7e",
    }),
  })
  .openapi("Error");

export type ErrorBody = z.infer<typeof ErrorSchema>;

/** A failure the client can act on; rendered as the one error shape with its status. */
export class ApiError extends Error {
  readonly code: ErrorCode;
  constructor(
    readonly status: ContentfulStatusCode,
    message: string,
    readonly details?: unknown,
    /** Extra response headers, e.g. Retry-After. */
    readonly headers?: Record<string, string>,
    code?: ErrorCode,
  ) {
    super(message);
    this.code = code ?? codeForStatus(status);
  }
}

export const notFound = (what: string, id: string) => new ApiError(404, `${what} not found`, { id });
export const conflict = (message: string, details?: unknown) => new ApiError(409, message, details);
/** A delete refused because other things still use what it would remove. */
export const inUse = (message: string, details: unknown) => new ApiError(409, message, details, undefined, "in_use");

/** The request id of the request under way: the one the request-id middleware chose. */
export function requestIdOf(c: Context): string {
  return (c.get("requestId" as never) as string | undefined) ?? currentRequestId() ?? "unknown";
}

/** Details are always an object, an array or null, so clients read one type. */
function normalizeDetails(details: unknown): ErrorBody["details"] {
  if (details === undefined || details === null) return null;
  if (Array.isArray(details)) return details;
  if (typeof details === "object") return details as Record<string, unknown>;
  return { value: details };
}

export function errorBody(c: Context, message: string, code: ErrorCode, details?: unknown): ErrorBody {
  return { error: message, code, details: normalizeDetails(details), request_id: requestIdOf(c) };
}

/** The one way an error response is built, wherever it is answered from (handlers, middleware). */
export function errorResponse(
  c: Context,
  status: ContentfulStatusCode,
  message: string,
  details?: unknown,
  { code, headers }: { code?: ErrorCode; headers?: Record<string, string> } = {},
): Response {
  return c.json(errorBody(c, message, code ?? codeForStatus(status), details), status, headers);
}

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

/**
 * Turns anything thrown by a handler into a JSON error. Constraint violations that slip
 * past the handlers' own checks (a concurrent insert of the same name) are conflicts, not 500s.
 */
export function renderError(err: unknown, c: Context): Response {
  if (err instanceof ApiError) {
    return errorResponse(c, err.status, err.message, err.details, { code: err.code, headers: err.headers });
  }
  if (err instanceof HTTPException) {
    if (err.status === 400 && /JSON/i.test(err.message)) return errorResponse(c, 400, "malformed JSON body", null, { code: "malformed_json" });
    if (err.status === 415) return errorResponse(c, 415, "the body must be application/json", { content_type: c.req.header("content-type") ?? null });
    return errorResponse(c, err.status, err.message || "request rejected");
  }
  const messages = causeMessages(err);
  if (SQLITE_CONFLICT.test(messages)) {
    return errorResponse(c, 409, "conflicts with existing data", { reason: messages.match(SQLITE_CONFLICT)?.[0] });
  }
  logError({ event: "unhandled_error", path: c.req.path, error: errorText(err) });
  return errorResponse(c, 500, "internal error");
}
