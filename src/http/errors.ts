import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { HTTPException } from "hono/http-exception";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { errorText, logError } from "../observability/log";

export const ErrorSchema = z
  .object({
    error: z.string().openapi({ example: "invalid request body" }),
    details: z.unknown().optional().openapi({ description: "Field-level problems or other context" }),
  })
  .openapi("Error");

export type ErrorBody = z.infer<typeof ErrorSchema>;

/** A failure the client can act on; rendered as `{error, details}` with its status. */
export class ApiError extends Error {
  constructor(
    readonly status: ContentfulStatusCode,
    message: string,
    readonly details?: unknown,
    /** Extra response headers, e.g. Retry-After. */
    readonly headers?: Record<string, string>,
  ) {
    super(message);
  }
}

export const notFound = (what: string, id: string) => new ApiError(404, `${what} not found`, { id });
export const conflict = (message: string, details?: unknown) => new ApiError(409, message, details);

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
    return c.json({ error: err.message, ...(err.details === undefined ? {} : { details: err.details }) }, err.status, err.headers);
  }
  if (err instanceof HTTPException) {
    const message = err.status === 400 && /JSON/i.test(err.message) ? "malformed JSON body" : err.message;
    return c.json({ error: message || "request rejected" }, err.status);
  }
  const messages = causeMessages(err);
  if (SQLITE_CONFLICT.test(messages)) {
    return c.json({ error: "conflicts with existing data", details: { reason: messages.match(SQLITE_CONFLICT)?.[0] } }, 409);
  }
  logError({ event: "unhandled_error", path: c.req.path, error: errorText(err) });
  return c.json({ error: "internal error" }, 500);
}
