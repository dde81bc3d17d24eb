/** The body was larger than allowed; nothing past the limit was kept. */
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
 * How much of an oversized request body is read (and dropped) before its 413 is sent; past this
 * it is cancelled instead. Why read it at all: an answer reaches a client only once it has sent
 * its body. A body cancelled, or left half read, while the client is still sending it makes
 * workerd close the connection (kj's HTTP server, which workerd runs on, waits for an unread
 * upload 1 s or 64 KiB by default: `canceledUploadGracePeriod`, `canceledUploadGraceBytes`), and
 * the client reads a reset (`ECONNRESET`, or a 500 "Network connection lost" from `wrangler
 * dev`'s proxy) instead of the 413. Measured under `wrangler dev` with 5 and 30 MiB bodies, with
 * and without Content-Length: cancelled, many were lost; drained, every one got its 413. Draining
 * costs about the CPU the runtime spends on a body nobody reads (measured: 30 MiB bodies to a 404
 * and to the webhook route).
 * Why stop: a chunked body can be endless. 100 MiB is about Cloudflare's own request body limit
 * on the Free and Pro plans (100 MB; 200 MB Business, 500 MB Enterprise): above its plan's limit
 * the edge answers 413 itself and the Worker never sees the request, so only `wrangler dev` or a
 * larger plan brings a body past this here, and its client gets a reset.
 */
export const REQUEST_DRAIN_CEILING_BYTES = 100 * 1024 * 1024;

/**
 * Reads a response's (or request's) body of at most `limit` bytes. A declared Content-Length
 * over the limit is refused before reading anything; a body without one (chunked) is cut off
 * as soon as it passes the limit, so an oversized body is never held whole. What is not read is
 * cancelled. `keepHead`: on refusal, the first this many bytes are read anyway and handed over in
 * the error (a caller that must still name what it refused, such as a queue message's id).
 */
export function readLimitedBody(msg: Request | Response, limit: number, keepHead = 0): Promise<Uint8Array> {
  return readCapped(msg, limit, keepHead, 0);
}

/**
 * Reads an incoming request's body of at most `limit` bytes, for a route that answers 413 past
 * it. Like readLimitedBody, nothing past the limit is kept; unlike it, the rest of an oversized
 * body is read and dropped before BodyTooLarge is thrown (up to `drainUpTo` bytes in all,
 * REQUEST_DRAIN_CEILING_BYTES), so the client, done sending, reads the 413.
 */
export function readRequestBody(req: Request, limit: number, drainUpTo = REQUEST_DRAIN_CEILING_BYTES): Promise<Uint8Array> {
  return readCapped(req, limit, 0, drainUpTo);
}

async function readCapped(msg: Request | Response, limit: number, keepHead: number, drainUpTo: number): Promise<Uint8Array> {
  const declared = msg.headers.get("content-length");
  if (declared !== null && /^\d+$/.test(declared.trim())) {
    const length = Number(declared);
    if (length > limit) {
      let head: Uint8Array = new Uint8Array(0);
      if (keepHead > 0 && msg.body) head = await readAtMost(msg.body, keepHead);
      // HTTP framing ends the body at its declared length: drained whole, or not read at all.
      else if (msg.body) await discard(msg.body.getReader(), length <= drainUpTo ? drainUpTo : 0);
      throw new BodyTooLarge(limit, head);
    }
    // HTTP framing holds the body to its declared length: read it natively in one go.
    return new Uint8Array(await msg.arrayBuffer());
  }
  if (!msg.body) return new Uint8Array(0);
  const reader = msg.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      const head = keepHead > 0 ? joined([...chunks, value], size).subarray(0, keepHead) : undefined;
      chunks.length = 0;
      await discard(reader, drainUpTo - size);
      throw new BodyTooLarge(limit, head);
    }
    chunks.push(value);
  }
  return chunks.length === 1 ? chunks[0]! : joined(chunks, size);
}

/**
 * Reads what is left of a stream and drops it, `budget` bytes at most: a longer rest (or any,
 * when the budget is 0) is cancelled. A sender that goes away meanwhile ends it too.
 */
async function discard(reader: ReadableStreamDefaultReader<Uint8Array>, budget: number): Promise<void> {
  let read = 0;
  try {
    while (budget > 0 && read <= budget) {
      const { done, value } = await reader.read();
      if (done) return;
      read += value.byteLength;
    }
  } catch {
    return;
  }
  await reader.cancel().catch(() => {});
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
