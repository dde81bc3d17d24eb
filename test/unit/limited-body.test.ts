import { describe, expect, it } from "vitest";
import { BodyTooLarge, readLimitedBody } from "../../src/http/limited-body";

function streamOf(chunks: number[], onPull: () => void): ReadableStream<Uint8Array> {
  let i = 0;
  return new ReadableStream({
    pull(controller) {
      onPull();
      if (i < chunks.length) controller.enqueue(new Uint8Array(chunks[i++]!).fill(65));
      else controller.close();
    },
  });
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
