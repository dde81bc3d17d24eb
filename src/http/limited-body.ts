/** The body was larger than allowed; nothing past the limit was read. */
export class BodyTooLarge extends Error {
  readonly limit: number;
  constructor(limit: number) {
    super(`body exceeds ${limit} bytes`);
    this.limit = limit;
  }
}

/**
 * Reads a request's or response's body of at most `limit` bytes. A declared Content-Length
 * over the limit is refused before reading anything; a body without one (chunked) is cut off
 * as soon as it passes the limit, so an oversized body is never held whole.
 */
export async function readLimitedBody(req: Request | Response, limit: number): Promise<Uint8Array> {
  const declared = req.headers.get("content-length");
  if (declared !== null && /^\d+$/.test(declared.trim())) {
    if (Number(declared) > limit) throw new BodyTooLarge(limit);
    // HTTP framing holds the body to its declared length: read it natively in one go.
    return new Uint8Array(await req.arrayBuffer());
  }
  if (!req.body) return new Uint8Array(0);
  const reader = req.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => {});
      throw new BodyTooLarge(limit);
    }
    chunks.push(value);
  }
  if (chunks.length === 1) return chunks[0]!;
  const out = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.byteLength;
  }
  return out;
}
