import type { HttpBindings } from "@hono/node-server";
import type { Context } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { Failure } from "./outcome.ts";
import { pathOf } from "./request-target.ts";

/** What every handler of the bridge sees: Node's request (for its raw target) and what earlier steps found. */
export type BridgeEnv = {
  Bindings: HttpBindings;
  Variables: {
    /** The request body as received, read once by the signature check. */
    body: Buffer;
    /** For the request log: the protocol operation and instance, once the route is known. */
    operation: string | undefined;
    instance: string | undefined;
    /** The `error` of an error answer, for the request log. */
    error: string | undefined;
  };
};
export type BridgeContext = Context<BridgeEnv>;

/** Thrown anywhere in a request: answered as `{error, details?}` with its status. */
export class HttpError extends Error {
  status: number;
  details?: unknown;
  constructor(status: number, message: string, details?: unknown) {
    super(message);
    this.status = status;
    this.details = details;
  }
}

/** The request target exactly as it arrived (Node's `req.url`), which is what was signed. */
export const rawTarget = (c: BridgeContext): string => c.env.incoming.url ?? "/";

/** The request's path as it arrived, base path included, for messages. */
export const requestPath = (c: BridgeContext): string => pathOf(rawTarget(c));

/** `{error, details?}` with `status`; the message is kept for the request log. */
export function errorAnswer(
  c: BridgeContext,
  status: number,
  message: string,
  details?: unknown,
  headers?: Record<string, string>,
): Response {
  c.set("error", message);
  return c.json({ error: message, ...(details === undefined ? {} : { details }) }, status as ContentfulStatusCode, headers);
}

/** A provider failure; a full bridge (503) tells the coordinator when to come back. */
export const failureAnswer = (c: BridgeContext, f: Failure): Response =>
  errorAnswer(c, f.status, f.message, undefined, f.status === 503 ? { "retry-after": "5" } : undefined);
