import type { MiddlewareHandler } from "hono";
import { type BridgeEnv, HttpError } from "./answers.ts";

/**
 * Reads the whole body into `body` (the signature covers it, CreateInstance gets it byte for
 * byte) and refuses one over `maxBytes` with 413. An oversized body is still read to its end
 * before the answer, so the client's keep-alive connection stays usable for its next request.
 */
export function readBody(maxBytes: number): MiddlewareHandler<BridgeEnv> {
  return async (c, next) => {
    const chunks: Uint8Array[] = [];
    let size = 0;
    const reader = c.req.raw.body?.getReader();
    while (reader) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.length;
      if (size <= maxBytes) chunks.push(value);
    }
    if (size > maxBytes) throw new HttpError(413, `request body over ${maxBytes} bytes`);
    c.set("body", Buffer.concat(chunks));
    await next();
  };
}
