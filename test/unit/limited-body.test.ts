import { describe, expect, it } from "vitest";
import { BodyTooLarge, readLimitedBody } from "../../src/http/limited-body";
import { endpointMatches } from "../../src/db/webhook-directory";

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
    const req = new Request("http://x/", { method: "POST", body: streamOf([4, 4, 4, 4, 4, 4], () => pulls++), duplex: "half" } as RequestInit);
    await expect(readLimitedBody(req, 10)).rejects.toBeInstanceOf(BodyTooLarge);
    expect(pulls).toBeLessThan(6);
  });
});

describe("endpointMatches", () => {
  const ghes = { name: "corp", baseUrl: "https://GHES.corp.example:8443" };
  const dotcom = { name: "github.com", baseUrl: "https://github.com" };
  it("takes deliveries without X-GitHub-Enterprise-Host as github.com's", () => {
    expect(endpointMatches(dotcom, null)).toBe(true);
    expect(endpointMatches(ghes, null)).toBe(false);
  });
  it("matches GHES by the host of the endpoint's base URL, with or without port, in any case", () => {
    expect(endpointMatches(ghes, "ghes.corp.example")).toBe(true);
    expect(endpointMatches(ghes, "GHES.corp.example:8443")).toBe(true);
    expect(endpointMatches(ghes, "other.example")).toBe(false);
    expect(endpointMatches(dotcom, "ghes.corp.example")).toBe(false);
  });
});
