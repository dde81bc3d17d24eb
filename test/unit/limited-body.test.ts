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
});
