/** The body was larger than allowed; nothing past the limit was read. */
export class BodyTooLarge extends Error {
  readonly limit: number;
  /** The body's first bytes, when the reader asked to keep some (`keepHead`); else empty. */
  readonly head: Uint8Array;
  constructor(limit: number, head: Uint8Array = new Uint8Array(0)) {
    super(`body exceeds ${limit} bytes`);
    this.limit = limit;
    this.head = head;
  }
}

/**
 * Reads a request's or response's body of at most `limit` bytes. A declared Content-Length
 * over the limit is refused before reading anything; a body without one (chunked) is cut off
 * as soon as it passes the limit, so an oversized body is never held whole. `keepHead`: on
 * refusal, the first this many bytes are read anyway and handed over in the error (a caller
 * that must still name what it refused, such as a queue message's id).
 */
export async function readLimitedBody(req: Request | Response, limit: number, keepHead = 0): Promise<Uint8Array> {
  const declared = req.headers.get("content-length");
  if (declared !== null && /^\d+$/.test(declared.trim())) {
    if (Number(declared) > limit) {
      // A body left unread would hold its connection until collected: what is not read is cancelled.
      let head: Uint8Array = new Uint8Array(0);
      if (keepHead > 0 && req.body) head = await readAtMost(req.body, keepHead);
      else await req.body?.cancel().catch(() => {});
      throw new BodyTooLarge(limit, head);
    }
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
      throw new BodyTooLarge(limit, keepHead > 0 ? joined([...chunks, value], size).subarray(0, keepHead) : undefined);
    }
    chunks.push(value);
  }
  return chunks.length === 1 ? chunks[0]! : joined(chunks, size);
}

/** Up to `n` bytes from the start of a stream; the rest is cancelled. */
async function readAtMost(body: ReadableStream<Uint8Array>, n: number): Promise<Uint8Array> {
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  while (size < n) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
    size += value.byteLength;
  }
  await reader.cancel().catch(() => {});
  return joined(chunks, size).subarray(0, n);
}

function joined(chunks: Uint8Array[], size: number): Uint8Array {
  const out = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.byteLength;
  }
  return out;
}
