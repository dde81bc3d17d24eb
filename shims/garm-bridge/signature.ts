import type { MiddlewareHandler } from "hono";
import { verifySignature } from "../../src/providers/shim-signing.ts";
import { type BridgeEnv, HttpError, rawTarget } from "./answers.ts";
import { signedTarget } from "./request-target.ts";

/**
 * Refuses (401, with the reason) every request not signed by the coordinator with the shared
 * secret, or one of the previous secrets while a rotation is under way, before anything runs.
 * The body comes from readBody (request-body.ts).
 */
export function requireSignature(secrets: string[], basePath: string): MiddlewareHandler<BridgeEnv> {
  return async (c, next) => {
    const body = c.get("body");
    const signed = { method: c.req.method, pathWithQuery: signedTarget(rawTarget(c), basePath), body };
    const received = { timestamp: c.req.header("X-Edgerunner-Timestamp"), signature: c.req.header("X-Edgerunner-Signature") };
    let check = await verifySignature(secrets[0]!, signed, received);
    for (const previous of secrets.slice(1)) {
      if (check.ok || check.reason !== "bad_signature") break;
      check = await verifySignature(previous, signed, received);
    }
    if (!check.ok) throw new HttpError(401, "unauthorized", { reason: check.reason });
    await next();
  };
}
