import { describe, expect, it } from "vitest";
import { BodyTooLarge, readLimitedBody, readRequestBody } from "../../src/http/limited-body";

function streamOf(chunks: number[], onPull: () => void, onCancel: () => void = () => {}): ReadableStream<Uint8Array> {
  let i = 0;
  return new ReadableStream({
    pull(controller) {
      onPull();
      if (i < chunks.length) controller.enqueue(new Uint8Array(chunks[i++]!).fill(65));
      else controller.close();
    },
    cancel: onCancel,
  });
}

/** A POST whose body is `chunks`, with or without a declared length; `seen` counts pulls and cancels. */
function upload(chunks: number[], declared: boolean) {
  const seen = { pulls: 0, cancelled: false };
  const body = streamOf(
    chunks,
    () => seen.pulls++,
    () => {
      seen.cancelled = true;
    },
  );
  const length = chunks.reduce((a, b) => a + b, 0);
  const headers: Record<string, string> = declared ? { "content-length": String(length) } : {};
  return { req: new Request("http://x/", { method: "POST", body, headers, duplex: "half" } as RequestInit), seen };
}

describe("readLimitedBody", () => {
  it("reads a body within the limit", async () => {
    const body = await readLimitedBody(new Request("http://x/", { method: "POST", body: "hello" }), 5);
    expect(new TextDecoder().decode(body)).toBe("hello");
  });

  it("refuses a declared Content-Length over the limit without reading", async () => {
    let pulls = 0;
    const req = new Request("http://x/", {
      method: "POST",
      body: streamOf([10], () => pulls++),
      headers: { "content-length": "11" },
      duplex: "half",
    } as RequestInit);
    await expect(readLimitedBody(req, 10)).rejects.toBeInstanceOf(BodyTooLarge);
    expect(pulls).toBeLessThanOrEqual(1);
  });

  it("stops reading a chunked body as soon as it passes the limit", async () => {
    let pulls = 0;
    const req = new Request("http://x/", {
      method: "POST",
      body: streamOf([4, 4, 4, 4, 4, 4], () => pulls++),
      duplex: "half",
    } as RequestInit);
    await expect(readLimitedBody(req, 10)).rejects.toBeInstanceOf(BodyTooLarge);
    expect(pulls).toBeLessThan(6);
  });

  it("hands over the first bytes of a refused body when asked, declared or chunked", async () => {
    const declared = new Response("0123456789ABCDEF", { headers: { "content-length": "16" } });
    const e1 = await readLimitedBody(declared, 10, 4).catch((e: unknown) => e);
    expect(e1).toBeInstanceOf(BodyTooLarge);
    expect(new TextDecoder().decode((e1 as BodyTooLarge).head)).toBe("0123");
    const chunked = new Response(streamOf([4, 4, 4], () => {}));
    const e2 = await readLimitedBody(chunked, 10, 6).catch((e: unknown) => e);
    expect(new TextDecoder().decode((e2 as BodyTooLarge).head)).toBe("AAAAAA");
    // Not asked: nothing kept.
    const e3 = await readLimitedBody(new Response(streamOf([4, 4, 4], () => {})), 10).catch((e: unknown) => e);
    expect((e3 as BodyTooLarge).head.byteLength).toBe(0);
  });
});

describe("readRequestBody", () => {
  it("reads a body within the limit, declared or chunked", async () => {
    for (const declared of [true, false]) {
      const { req } = upload([4, 4], declared);
      expect((await readRequestBody(req, 8)).byteLength).toBe(8);
    }
  });

  it.each([
    ["a declared length", true],
    ["no declared length", false],
  ])("refuses an oversized body with %s only after reading it to its end, keeping nothing", async (_, declared) => {
    const { req, seen } = upload([4, 4, 4, 4, 4, 4], declared);
    const err = await readRequestBody(req, 10, 1000).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BodyTooLarge);
    expect((err as BodyTooLarge).head.byteLength).toBe(0);
    // Six chunks and the pull that closed the stream: the sender was done before the answer.
    expect(seen).toEqual({ pulls: 7, cancelled: false });
  });

  it("cancels a chunked body once it passes the drain ceiling", async () => {
    const { req, seen } = upload([4, 4, 4, 4, 4, 4, 4, 4, 4, 4], false);
    await expect(readRequestBody(req, 10, 16)).rejects.toBeInstanceOf(BodyTooLarge);
    expect(seen.cancelled).toBe(true);
    expect(seen.pulls).toBeLessThan(10);
  });

  it("cancels a body declared longer than the drain ceiling without reading it", async () => {
    const { req, seen } = upload([4, 4, 4, 4, 4, 4, 4, 4], true);
    await expect(readRequestBody(req, 10, 16)).rejects.toBeInstanceOf(BodyTooLarge);
    expect(seen.cancelled).toBe(true);
    expect(seen.pulls).toBeLessThanOrEqual(1);
  });

  it("still refuses when the sender goes away while its body is drained", async () => {
    let pulls = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (pulls++ < 3) controller.enqueue(new Uint8Array(8));
        else controller.error(new Error("connection lost"));
      },
    });
    const req = new Request("http://x/", { method: "POST", body, duplex: "half" } as RequestInit);
    await expect(readRequestBody(req, 10, 1000)).rejects.toBeInstanceOf(BodyTooLarge);
  });
});
